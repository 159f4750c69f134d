package hostile

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // the client accepts gzip, so servers may compress
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/proto"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var (
	lispInteropServer = flag.String("lisp_interop_server", "", "path of the Lisp interop server (grpc.testing.TestService)")
	goInteropServer   = flag.String("go_interop_server", "", "path of grpc-go's interop server")
)

const unaryCallPath = "/grpc.testing.TestService/UnaryCall"

// startInterop starts the named interop server, on cpus if not empty.
func startInterop(t *testing.T, name string, cpus cpuset.Set) *target {
	t.Helper()
	path := map[string]string{"lisp": *lispInteropServer, "go": *goInteropServer}[name]
	if path == "" {
		t.Fatalf("-%s_interop_server not given", name)
	}
	spec := serverproc.Spec{ReadyTimeout: 60 * time.Second, StopGrace: 5 * time.Second,
		Log: serverLog(t, name), Check: serverproc.CheckLoopback, CPUs: cpus}
	var p *serverproc.Process
	var err error
	if name == "lisp" {
		spec.Argv = []string{runfile.Path(path), "-port", "0", "-heap_report"}
		p, err = serverproc.Start(context.Background(), spec)
	} else {
		// grpc-go's interop server announces nothing; it serves on the port it is given.
		p, err = serverproc.StartListeningOn(spec, func(port string) []string {
			return []string{runfile.Path(path), "-port", port}
		})
	}
	if err != nil {
		t.Fatalf("starting the %s interop server: %v", name, err)
	}
	t.Cleanup(func() { p.Stop() })
	return &target{name: name, proc: p, addr: p.Addr()}
}

// clgrpcBound is boundMiB for the clgrpc server and no bound for grpc-go's:
// grpc-go keeps every response for a peer that does not read them (its
// figures are logged, not judged), where clgrpc bounds its output.
func clgrpcBound(s *target, boundMiB float64) float64 {
	if s.name == "lisp" {
		return boundMiB
	}
	return math.Inf(1)
}

func dialInterop(t *testing.T, addr string) testpb.TestServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return testpb.NewTestServiceClient(conn)
}

// interopHealthy: the process is alive, a new connection's EmptyCall and a
// one-response StreamingOutputCall are answered within d, and RSS and the
// heap (where the server reports it) are under boundMiB.
func interopHealthy(t *testing.T, s *target, phase string, d time.Duration, boundMiB float64) {
	t.Helper()
	if err := s.proc.ExitedEarly(); err != nil {
		t.Fatalf("%s: %s server died: %v", phase, s.name, err)
	}
	if err := wellBehavedCalls(s.addr, d); err != nil {
		t.Errorf("%s: a well-behaved client was not served within %v: %v", phase, d, err)
	}
	s.checkMemory(t, phase, boundMiB)
}

func wellBehavedCalls(addr string, d time.Duration) error {
	ctx, conn, done, err := dialWithin(addr, insecure.NewCredentials(), d)
	if err != nil {
		return err
	}
	defer done()
	c := testpb.NewTestServiceClient(conn)
	if _, err := c.EmptyCall(ctx, &testpb.Empty{}); err != nil {
		return fmt.Errorf("EmptyCall: %w", err)
	}
	stream, err := c.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{
		ResponseParameters: []*testpb.ResponseParameters{{Size: 10}}})
	if err != nil {
		return fmt.Errorf("StreamingOutputCall: %w", err)
	}
	for {
		if _, err := stream.Recv(); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("StreamingOutputCall: %w", err)
		}
	}
}

func payload(n int) *testpb.Payload { return &testpb.Payload{Body: make([]byte, n)} }

// echoRequest asks FullDuplexCall for one response the size of its own payload.
func echoRequest(n int) *testpb.StreamingOutputCallRequest {
	return &testpb.StreamingOutputCallRequest{Payload: payload(n),
		ResponseParameters: []*testpb.ResponseParameters{{Size: int32(n)}}}
}

// smallThenLarge is the traffic that once hung clgrpc: on one bidi stream,
// ten 20,000-octet messages, each echoed, then one of 900,000, echoed.
func smallThenLarge(ctx context.Context, c testpb.TestServiceClient) error {
	stream, err := c.FullDuplexCall(ctx)
	if err != nil {
		return err
	}
	for i, n := range []int{20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 900000} {
		if err := stream.Send(echoRequest(n)); err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		r, err := stream.Recv()
		if err != nil {
			return fmt.Errorf("echo %d: %w", i, err)
		}
		if len(r.GetPayload().GetBody()) != n {
			return fmt.Errorf("echo %d has %d octets, want %d", i, len(r.GetPayload().GetBody()), n)
		}
	}
	stream.CloseSend()
	if _, err := stream.Recv(); err != io.EOF {
		return fmt.Errorf("after the last echo: %v", err)
	}
	return nil
}

// withinDeadline runs call with a 15 s deadline and fails the test unless
// it succeeds within limit.
func withinDeadline(t *testing.T, limit time.Duration, what string, call func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	err := call(ctx)
	took := time.Since(start)
	t.Logf("%s: %v in %v", what, err, took.Round(time.Millisecond))
	if err != nil {
		t.Errorf("%s failed after %v: %v", what, took.Round(time.Millisecond), err)
	} else if took > limit {
		t.Errorf("%s took %v, over %v", what, took.Round(time.Millisecond), limit)
	}
}

func TestOrdinaryTraffic(t *testing.T) {
	raiseFileLimit(t)
	for _, name := range []string{"lisp", "go"} {
		t.Run(name, func(t *testing.T) {
			s := startInterop(t, name, nil)
			c := dialInterop(t, s.addr)
			interopHealthy(t, s, "before any traffic", time.Second, 512)
			t.Run("bidi_small_then_large", func(t *testing.T) {
				withinDeadline(t, 5*time.Second, "10 x 20,000 then 900,000 octets, echoed", func(ctx context.Context) error {
					return smallThenLarge(ctx, c)
				})
			})
			t.Run("client_stream_small_then_large", func(t *testing.T) {
				withinDeadline(t, 5*time.Second, "10 x 20,000 then 900,000 octets on a client stream", func(ctx context.Context) error {
					stream, err := c.StreamingInputCall(ctx)
					if err != nil {
						return err
					}
					for _, n := range []int{20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 900000} {
						if err := stream.Send(&testpb.StreamingInputCallRequest{Payload: payload(n)}); err != nil {
							return err
						}
					}
					r, err := stream.CloseAndRecv()
					if err == nil && r.GetAggregatedPayloadSize() != 1100000 {
						err = fmt.Errorf("aggregated %d octets, want 1,100,000", r.GetAggregatedPayloadSize())
					}
					return err
				})
			})
			t.Run("fifty_bidi_small_then_large", func(t *testing.T) {
				withinDeadline(t, 10*time.Second, "50 such bidi streams at once", func(ctx context.Context) error {
					errs := make(chan error, 50)
					for i := 0; i < 50; i++ {
						go func() { errs <- smallThenLarge(ctx, c) }()
					}
					var all []error
					for i := 0; i < 50; i++ {
						all = append(all, <-errs)
					}
					return errors.Join(all...)
				})
			})
			t.Run("compression_asked_mid_stream", func(t *testing.T) {
				withinDeadline(t, 5*time.Second, "a bidi stream whose second request asks for a compressed response", func(ctx context.Context) error {
					stream, err := c.FullDuplexCall(ctx)
					if err != nil {
						return err
					}
					for _, compressed := range []bool{false, true, true} {
						if err := stream.Send(&testpb.StreamingOutputCallRequest{ResponseParameters: []*testpb.ResponseParameters{
							{Size: 1000, Compressed: &testpb.BoolValue{Value: compressed}}}}); err != nil {
							return err
						}
						if _, err := stream.Recv(); err != nil {
							return err
						}
					}
					stream.CloseSend()
					if _, err := stream.Recv(); err != io.EOF {
						return fmt.Errorf("at the end: %v", err)
					}
					return nil
				})
			})
			t.Run("unread_large_messages", func(t *testing.T) { unreadLargeMessages(t, s, c) })
			t.Run("large_window_late_reader", func(t *testing.T) { lateReader(t, s) })
			t.Run("non_reading_unary_clients", func(t *testing.T) { nonReadingUnaryClients(t, s) })
			interopHealthy(t, s, "after all traffic", time.Second, clgrpcBound(s, 512))
			t.Logf("%s interop server after all traffic: %.0f MiB RSS, %d threads", s.name, s.rssMiB(t), s.threads(t))
		})
	}
}

// unreadLargeMessages: 2 MiB messages to a handler that reads one and then
// sleeps. Flow control must hold the sender within one stream window past
// the first message, whatever the message size, and the server's memory
// with it. clgrpc's window is 1 MiB; grpc-go's BDP estimator may grow its
// own to 16 MiB, so its sender may get up to eight more messages through.
func unreadLargeMessages(t *testing.T, s *target, c testpb.TestServiceClient) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := c.FullDuplexCall(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The first request makes the handler sleep 10 s before it answers (and reads again).
	if err := stream.Send(&testpb.StreamingOutputCallRequest{ResponseParameters: []*testpb.ResponseParameters{
		{Size: 1, IntervalUs: 10000000}}}); err != nil {
		t.Fatal(err)
	}
	before := s.rssMiB(t)
	var sent atomic.Int64
	go func() {
		big := &testpb.StreamingOutputCallRequest{Payload: payload(2 << 20)}
		for i := 0; i < 64; i++ {
			if stream.Send(big) != nil {
				return
			}
			sent.Add(1)
		}
	}()
	time.Sleep(3 * time.Second)
	after := s.rssMiB(t)
	n := sent.Load()
	t.Logf("2 MiB messages sent to a sleeping handler in 3 s: %d; RSS %.0f -> %.0f MiB", n, before, after)
	limit := int64(3)
	if s.name == "go" {
		limit = 9
	}
	if n > limit {
		t.Errorf("%d messages of 2 MiB (%d MiB) went to a handler that reads none: the server did not hold the sender", n, 2*n)
	}
	if after-before > 64 {
		t.Errorf("RSS grew by %.0f MiB while the handler slept", after-before)
	}
	cancel()
}

// rawUnaryRequests pipelines n UnaryCall requests for size-octet responses
// on streams from firstID, with no reads.
func rawUnaryRequests(p *Peer, addr string, firstID uint32, n int, size int32) error {
	req, err := proto.Marshal(&testpb.SimpleRequest{ResponseSize: size})
	if err != nil {
		return err
	}
	msg := GRPCMessage(req, uint32(len(req)))
	for i := 0; i < n; i++ {
		id := firstID + uint32(2*i)
		if err := p.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: id,
			BlockFragment: p.RequestBlock(addr, unaryCallPath), EndHeaders: true}); err != nil {
			return err
		}
		if err := p.Framer.WriteData(id, true, msg); err != nil {
			return err
		}
	}
	return nil
}

// countTrailers reads until want streams have ended with trailers or d has
// passed, and returns how many did.
func countTrailers(p *Peer, want int, d time.Duration) int {
	dec := hpack.NewDecoder(4096, nil)
	p.Conn.SetReadDeadline(time.Now().Add(d))
	defer p.Conn.SetReadDeadline(time.Time{})
	ended := 0
	for ended < want {
		f, err := p.Framer.ReadFrame()
		if err != nil {
			return ended
		}
		if h, ok := f.(*http2.HeadersFrame); ok {
			dec.DecodeFull(h.HeaderBlockFragment())
			if h.StreamEnded() {
				ended++
			}
		}
	}
	return ended
}

// lateReader: a peer that grants every window up front asks for 300
// responses of 32 KiB (9.4 MiB, more than the server buffers before it
// parks responses) and reads nothing for a second. It never sends
// WINDOW_UPDATE, so the parked responses must resume as the output drains.
func lateReader(t *testing.T, s *target) {
	p, err := s.dial(true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	if err := p.OpenWindows(); err != nil {
		t.Fatal(err)
	}
	if err := rawUnaryRequests(p, s.addr, 1, 300, 32768); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	start := time.Now()
	ended := countTrailers(p, 300, 5*time.Second)
	t.Logf("read late: %d of 300 responses complete in %v", ended, time.Since(start).Round(time.Millisecond))
	if ended != 300 {
		t.Errorf("only %d of 300 responses completed within 5 s of reading", ended)
	}
}

// nonReadingUnaryClients: 16 connections with the largest windows each ask
// for 300 responses of 32 KiB and never read. No pool thread may wait on
// them: a well-behaved client's unary and streaming calls are answered
// within two seconds.
func nonReadingUnaryClients(t *testing.T, s *target) {
	var peers []*Peer
	defer func() {
		for _, p := range peers {
			p.Conn.Close()
		}
	}()
	for i := 0; i < 16; i++ {
		p, err := s.dial(true)
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, p)
		p.Conn.(*net.TCPConn).SetReadBuffer(4096)
		if err := p.OpenWindows(); err != nil {
			t.Fatal(err)
		}
		p.Conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if err := rawUnaryRequests(p, s.addr, 1, 300, 32768); err != nil {
			t.Logf("connection %d: writes stopped: %v", i, err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	interopHealthy(t, s, "with 16 connections that do not read", 2*time.Second, clgrpcBound(s, 768))
}

// TestWindowUpdateDribble: with the server on one CPU (one reactor for
// clgrpc), a peer takes a 4 MiB response one octet of window at a time.
// Each update may cost the server only the octet it allows: a second
// connection's calls meanwhile keep a p99 under 50 ms on clgrpc.
func TestWindowUpdateDribble(t *testing.T) {
	for _, name := range []string{"lisp", "go"} {
		t.Run(name, func(t *testing.T) {
			s := startInterop(t, name, cpuset.Set{0})
			p, err := s.dial(false)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Conn.Close()
			if err := p.Handshake([]http2.Setting{{ID: http2.SettingInitialWindowSize, Val: 1}}); err != nil {
				t.Fatal(err)
			}
			p.Framer.WriteWindowUpdate(0, 1<<31-1-65535)
			if err := rawUnaryRequests(p, s.addr, 1, 1, 4<<20); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var updates int
			wg.Add(2)
			go func() { // drain whatever the server sends
				defer wg.Done()
				io.Copy(io.Discard, p.Conn)
			}()
			go func() {
				defer wg.Done()
				// 256 one-octet updates a millisecond (about 200,000 a second,
				// thousands of times what any reader that slow would send):
				// each may cost the server one 1-octet DATA frame, not a copy
				// of the rest of the response.
				var frame bytes.Buffer
				fr := http2.NewFramer(&frame, nil)
				for i := 0; i < 256; i++ {
					fr.WriteWindowUpdate(1, 1)
				}
				for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := p.Conn.Write(frame.Bytes()); err != nil {
						return
					}
					updates += 256
					time.Sleep(time.Millisecond)
				}
			}()
			c := dialInterop(t, s.addr)
			var latencies []time.Duration
			for i := 0; i < 200; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				start := time.Now()
				_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 100})
				cancel()
				if err != nil {
					t.Fatalf("call %d beside the dribble: %v", i, err)
				}
				latencies = append(latencies, time.Since(start))
				time.Sleep(10 * time.Millisecond)
			}
			close(stop)
			p.Conn.Close()
			wg.Wait()
			sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
			p99 := latencies[len(latencies)*99/100]
			t.Logf("%s server on one CPU, %d one-octet WINDOW_UPDATEs: a second connection's p50 %v, p99 %v",
				name, updates, latencies[len(latencies)/2], p99)
			// The bound is clgrpc's (one reactor serves both connections);
			// grpc-go's figure is logged beside it.
			if name == "lisp" && p99 > 50*time.Millisecond {
				t.Errorf("p99 %v beside a one-octet WINDOW_UPDATE dribble, over 50 ms", p99)
			}
		})
	}
}
