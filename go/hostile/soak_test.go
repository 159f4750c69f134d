package hostile

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

var (
	soakDuration = flag.Duration("soak", 0, "run TestSoak for this long (0: skip it)")
	soakWorkers  = flag.Int("soak_workers", 16, "concurrent clients in TestSoak")
)

// maxSoakMessage stays under both sides' default 4 MiB receive limit.
const maxSoakMessage = 4<<20 - 1024

// soakSizes are the message sizes the soak draws from: empty, small, one
// frame, past the stream window, and near the receive limit.
var soakSizes = []int{0, 1, 100, 16384, 65536, 300000, 1 << 20, 2 << 20, maxSoakMessage}

// soakTally counts outcomes: provoked outcomes (a deadline the soak set
// short, a cancel it made) apart from everything else.
type soakTally struct {
	mu         sync.Mutex
	Calls      int            `json:"calls"`
	OK         int            `json:"ok"`
	Provoked   map[string]int `json:"provoked"`
	Unexpected map[string]int `json:"unexpected"`
	Samples    []soakSample   `json:"samples"`
	firstError map[string]string
}

type soakSample struct {
	Seconds float64 `json:"seconds"`
	RSSMiB  float64 `json:"rss_mib"`
	Threads int     `json:"threads"`
	Calls   int     `json:"calls"`
}

func (s *soakTally) record(kind string, err error, provoked codes.Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Calls++
	code := status.Code(err)
	switch {
	case err == nil:
		s.OK++
	case code == provoked:
		s.Provoked[code.String()]++
	default:
		key := kind + " " + code.String()
		if provoked != codes.OK {
			key += " (provoked " + provoked.String() + ")"
		}
		s.Unexpected[key]++
		if _, ok := s.firstError[key]; !ok {
			s.firstError[key] = err.Error()
		}
	}
}

// TestSoak runs mixed traffic against the Lisp interop server for -soak:
// all four kinds of call, messages from 0 to 4 MiB, cancellations, short
// deadlines, clients that come and go and slow readers. Only the deadlines
// and cancellations it provokes may fail; RSS must stay flat.
func TestSoak(t *testing.T) {
	if *soakDuration == 0 {
		t.Skip("-soak not given")
	}
	s := startInterop(t, "lisp", nil)
	tally := &soakTally{Provoked: map[string]int{}, Unexpected: map[string]int{}, firstError: map[string]string{}}
	start := time.Now()
	end := start.Add(*soakDuration)
	var wg sync.WaitGroup
	for w := 0; w < *soakWorkers; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			soakWorker(s.addr, rand.New(rand.NewSource(seed)), end, tally)
		}(int64(w) + 1)
	}
	sample := func() {
		tally.mu.Lock()
		calls := tally.Calls
		tally.mu.Unlock()
		smp := soakSample{Seconds: time.Since(start).Seconds(), RSSMiB: s.rssMiB(t), Threads: s.threads(t), Calls: calls}
		tally.mu.Lock()
		tally.Samples = append(tally.Samples, smp)
		tally.mu.Unlock()
		t.Logf("%6.0f s: %8d calls, RSS %6.1f MiB, %4d threads", smp.Seconds, smp.Calls, smp.RSSMiB, smp.Threads)
	}
	for time.Now().Before(end) {
		sample()
		time.Sleep(min(10*time.Second, time.Until(end)+time.Millisecond))
	}
	wg.Wait()
	sample()
	if err := s.proc.ExitedEarly(); err != nil {
		t.Fatalf("the server died: %v", err)
	}
	writeSoakReport(t, tally)
	for key, n := range tally.Unexpected {
		t.Errorf("%d unexpected %s, the first: %s", n, key, tally.firstError[key])
	}
	if growth := rssGrowth(tally.Samples); growth > 0.25 {
		t.Errorf("the lowest RSS grew by %.0f%% from the first to the last third of the soak", 100*growth)
	}
}

// rssGrowth compares the lowest RSS of the last third of the samples with
// that of the first third after the first minute (the heap's warm-up). The
// lowest sample is the one nearest after a full collection: what the
// server retains. Samples between collections also hold garbage not yet
// collected, which for SBCL swings by hundreds of MiB under this load.
func rssGrowth(samples []soakSample) float64 {
	var warm []soakSample
	for _, s := range samples {
		if s.Seconds >= 60 {
			warm = append(warm, s)
		}
	}
	if len(warm) < 6 {
		return 0
	}
	lowest := func(ss []soakSample) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = s.RSSMiB
		}
		sort.Float64s(v)
		return v[0]
	}
	third := len(warm) / 3
	return lowest(warm[len(warm)-third:])/lowest(warm[:third]) - 1
}

func writeSoakReport(t *testing.T, tally *soakTally) {
	t.Logf("%d calls: %d OK, provoked %v, unexpected %v", tally.Calls, tally.OK, tally.Provoked, tally.Unexpected)
	dir := os.Getenv("TEST_UNDECLARED_OUTPUTS_DIR")
	if dir == "" {
		return
	}
	data, _ := json.MarshalIndent(tally, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "soak.json"), data, 0o644); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "soak.md"), []byte(soakSummary(tally)), 0o644); err != nil {
		t.Error(err)
	}
}

// soakWorker is one client: it makes calls of every kind until end, and
// now and then drops its connection for a new one.
func soakWorker(addr string, r *rand.Rand, end time.Time, tally *soakTally) {
	var conn *grpc.ClientConn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for time.Now().Before(end) {
		if conn == nil || r.Intn(20) == 0 { // clients come and go
			if conn != nil {
				conn.Close()
			}
			var err error
			if conn, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
				tally.record("connect", err, codes.OK)
				return
			}
		}
		soakCall(testpb.NewTestServiceClient(conn), r, tally)
	}
}

// soakCall makes one call of a random kind. One in ten gets a deadline too
// short to finish in, one in ten is cancelled part-way: those may fail with
// exactly that code.
func soakCall(c testpb.TestServiceClient, r *rand.Rand, tally *soakTally) {
	size := func() int { return soakSizes[r.Intn(len(soakSizes))] }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	provoked := codes.OK
	switch r.Intn(10) {
	case 0:
		provoked = codes.DeadlineExceeded
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, time.Duration(1+r.Intn(20))*time.Millisecond)
		defer c2()
	case 1:
		provoked = codes.Canceled
		var c2 context.CancelFunc
		ctx, c2 = context.WithCancel(ctx)
		time.AfterFunc(time.Duration(r.Intn(30))*time.Millisecond, c2)
	}
	slow := r.Intn(8) == 0 // a slow reader: 20 ms between reads
	recvPause := func() {
		if slow {
			time.Sleep(20 * time.Millisecond)
		}
	}
	kind := []string{"unary", "server_streaming", "client_streaming", "bidi"}[r.Intn(4)]
	var err error
	switch kind {
	case "unary":
		var resp *testpb.SimpleResponse
		n := size()
		resp, err = c.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: int32(n), Payload: payload(size())})
		if err == nil && len(resp.GetPayload().GetBody()) != n {
			err = fmt.Errorf("response of %d octets, want %d", len(resp.GetPayload().GetBody()), n)
		}
	case "server_streaming":
		var params []*testpb.ResponseParameters
		for i := 0; i < 1+r.Intn(5); i++ {
			params = append(params, &testpb.ResponseParameters{Size: int32(size())})
		}
		var stream testpb.TestService_StreamingOutputCallClient
		if stream, err = c.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{ResponseParameters: params}); err == nil {
			err = drain(stream.Recv, len(params), recvPause)
		}
	case "client_streaming":
		var stream testpb.TestService_StreamingInputCallClient
		if stream, err = c.StreamingInputCall(ctx); err == nil {
			total := 0
			for i := 0; i < 1+r.Intn(5) && err == nil; i++ {
				n := size()
				total += n
				err = stream.Send(&testpb.StreamingInputCallRequest{Payload: payload(n)})
			}
			if err == io.EOF {
				// The stream has ended: its status comes with CloseAndRecv.
				err = nil
			}
			var resp *testpb.StreamingInputCallResponse
			if err == nil {
				resp, err = stream.CloseAndRecv()
			}
			if err == nil && int(resp.GetAggregatedPayloadSize()) != total {
				err = fmt.Errorf("aggregated %d octets, want %d", resp.GetAggregatedPayloadSize(), total)
			}
		}
	case "bidi":
		var stream testpb.TestService_FullDuplexCallClient
		if stream, err = c.FullDuplexCall(ctx); err == nil {
			for i := 0; i < 1+r.Intn(5) && err == nil; i++ {
				if err = stream.Send(echoRequest(size())); err == nil {
					recvPause()
					_, err = stream.Recv()
				} else if err == io.EOF {
					// The stream has ended: its status comes with Recv.
					_, err = stream.Recv()
				}
			}
			if err == nil {
				stream.CloseSend()
				if _, err = stream.Recv(); err == io.EOF {
					err = nil
				} else if err == nil {
					err = fmt.Errorf("a response after the last")
				}
			}
		}
	}
	if err == io.EOF {
		// A stream that ended early reports its status on the next Recv.
		err = fmt.Errorf("stream ended early")
	}
	tally.record(kind, err, provoked)
}

// drain reads want messages, then the end of the stream.
func drain[T any](recv func() (T, error), want int, pause func()) error {
	for i := 0; i < want; i++ {
		pause()
		if _, err := recv(); err != nil {
			return err // as it is: its status code is what the soak counts
		}
	}
	switch _, err := recv(); {
	case err == io.EOF:
		return nil
	case err != nil:
		return err // as it is: its status code is what the soak counts
	default:
		return fmt.Errorf("a response after the %d asked for", want)
	}
}

// soakSummary is the soak's result as Markdown: the outcomes, then RSS and
// threads over time.
func soakSummary(tally *soakTally) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d calls: %d OK, provoked %v, unexpected %v\n\n", tally.Calls, tally.OK, tally.Provoked, tally.Unexpected)
	fmt.Fprintf(&b, "| seconds | calls | RSS MiB | threads |\n|---|---|---|---|\n")
	for _, s := range tally.Samples {
		fmt.Fprintf(&b, "| %.0f | %d | %.1f | %d |\n", s.Seconds, s.Calls, s.RSSMiB, s.Threads)
	}
	return b.String()
}
