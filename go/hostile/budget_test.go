package hostile

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/proto"

	"github.com/grpcbench/grpcbench/internal/runfile"
)

var goInteropClient = flag.String("go_interop_client", "", "path of the interop client built from grpc-go's interop package")

// The Lisp interop server's memory under the attacks below. Its heap after
// a full collection holds what it holds at rest (about 25 MiB) and, for
// each of the two attacking connections, at most its budget of 64 MiB and
// four workers waiting to send a response that did not fit, each holding
// the response and its encoding (2 x 2 MiB here): 25 + 2 x 80 = 185 MiB,
// and some slack for what idle threads' stacks still point to. RSS also
// holds the garbage of a collection cycle (SBCL collects every 53 MB
// consed).
const (
	budgetHeapBoundMiB = 224
	budgetRSSBoundMiB  = 384
)

// Under parked responses from many connections, the heap holds what all
// connections may park (the process budget, a quarter of the 4 GiB heap)
// and what workers may hold beyond it while they wait for window (an
// overdraft of an eighth of that, each response with its encoding):
// 25 + 1,024 + 2 x 128 = 1,305 MiB, and slack as above.
const (
	manyConnsHeapBoundMiB = 1536
	manyConnsRSSBoundMiB  = 2048
)

// TestMemoryBudgets: attacks that cost the attacker little and the server
// much unless it bounds what it holds, against both interop servers, with
// grpc-go's interop client running large_unary during and after each.
// grpc-go's interop server has no heap report, and bounds none of these:
// its figures are logged, not judged.
func TestMemoryBudgets(t *testing.T) {
	for _, name := range []string{"lisp", "go"} {
		t.Run(name, func(t *testing.T) {
			s := startInterop(t, name, nil)
			s.checkMemoryBounds(t, "before any attack", clgrpcBound(s, budgetRSSBoundMiB), clgrpcBound(s, budgetHeapBoundMiB))
			t.Run("declared_length_streams", func(t *testing.T) { declaredLengthStreams(t, s) })
			t.Run("parked_full_responses", func(t *testing.T) {
				parkedResponses(t, s, 2, 200, 2<<20, budgetHeapBoundMiB, budgetRSSBoundMiB)
			})
			t.Run("parked_responses_over_400_connections", func(t *testing.T) {
				parkedResponses(t, s, 400, 4, 3<<20, manyConnsHeapBoundMiB, manyConnsRSSBoundMiB)
			})
			interopHealthy(t, s, "after every attack", time.Second, clgrpcBound(s, budgetRSSBoundMiB))
		})
	}
}

// largeUnary runs grpc-go's large_unary case (271,828 octets up, 314,159
// down) against s, n times.
func largeUnary(t *testing.T, s *target, phase string, n int) {
	t.Helper()
	port := s.addr[strings.LastIndex(s.addr, ":")+1:]
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := exec.CommandContext(ctx, runfile.Path(*goInteropClient),
			"-server_host", "127.0.0.1", "-server_port", port, "-test_case", "large_unary").CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: large_unary %d of %d: %v\n%s", phase, i+1, n, err, out)
		}
	}
}

// attackers dials n raw peers that have sent their preface and settings.
func attackers(t *testing.T, s *target, n int, settings ...http2.Setting) []*Peer {
	t.Helper()
	var peers []*Peer
	for i := 0; i < n; i++ {
		p, err := s.dial(false)
		if err == nil {
			err = p.Handshake(settings)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Conn.Close() })
		peers = append(peers, p)
	}
	return peers
}

// declaredLengthStreams: two connections open 600 UnaryCall streams each;
// each stream sends a gRPC prefix that declares 4 MiB and one octet of
// body, about 145 KB on the wire in all. A server that allocates what is
// declared needs 4.7 GiB for them.
func declaredLengthStreams(t *testing.T, s *target) {
	peers := attackers(t, s, 2)
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Add(1)
		go func(p *Peer) {
			defer wg.Done()
			p.Conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			for i := 0; i < 600; i++ {
				id := uint32(1 + 2*i)
				if p.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: id,
					BlockFragment: p.RequestBlock(s.addr, unaryCallPath), EndHeaders: true}) != nil {
					return
				}
				if p.Framer.WriteData(id, false, GRPCMessage([]byte{0}, 4<<20)) != nil {
					return
				}
			}
		}(p)
	}
	wg.Wait()
	time.Sleep(300 * time.Millisecond)
	largeUnary(t, s, "during the attack", 3)
	s.checkMemoryBounds(t, "with 1,200 streams declaring 4 MiB", clgrpcBound(s, budgetRSSBoundMiB), clgrpcBound(s, budgetHeapBoundMiB))
	for _, p := range peers {
		p.Conn.Close()
	}
	largeUnary(t, s, "after the attack", 3)
}

// parkedResponses: conns connections that open no stream window
// (SETTINGS_INITIAL_WINDOW_SIZE 0) each ask for perConn responses of size
// octets, which can only wait in the server. clgrpc parks what fits in its
// connections' and process's memory budgets, lets a few workers wait with
// more, and fails the rest with RESOURCE_EXHAUSTED; memory is judged once
// the handlers have finished (within 20 s). With two connections of 200
// responses of 2 MiB, a connection's budget is what binds; with 160
// connections of four responses of 3 MiB, the process's budget is, and
// four waiting workers a connection would hold 1.7 GiB more.
func parkedResponses(t *testing.T, s *target, conns, perConn, size int, heapBoundMiB, rssBoundMiB float64) {
	peers := attackers(t, s, conns, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	req, err := proto.Marshal(&testpb.SimpleRequest{ResponseSize: int32(size)})
	if err != nil {
		t.Fatal(err)
	}
	msg := GRPCMessage(req, uint32(len(req)))
	for _, p := range peers {
		p.Conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		for i := 0; i < perConn; i++ {
			id := uint32(1 + 2*i)
			if err := p.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: id,
				BlockFragment: p.RequestBlock(s.addr, unaryCallPath), EndHeaders: true}); err != nil {
				t.Fatal(err)
			}
			if err := p.Framer.WriteData(id, true, msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	phase := fmt.Sprintf("with %d responses of %d MiB waiting for window on %d connections",
		conns*perConn, size>>20, conns)
	// Until the handlers are done, each holds its response and their
	// encoding: memory that lasts as long as they run, which the budget
	// does not count. What they leave parked is judged once they are
	// (hundreds of handlers on two cores, with megabytes each to allocate,
	// encode and copy, take several seconds).
	waitForMemory(t, s, "into the attack", heapBoundMiB, rssBoundMiB)
	largeUnary(t, s, phase, 3)
	s.checkMemoryBounds(t, phase, clgrpcBound(s, rssBoundMiB), clgrpcBound(s, heapBoundMiB))
	o := peers[0].Collect(2 * time.Second)
	t.Logf("the first connection's answers: %v", o)
	for _, p := range peers {
		p.Conn.Close()
	}
	// Closed, the connections give back all they held: within seconds, as
	// surplus workers retire and their stacks stop pointing at it.
	waitForMemory(t, s, "after the connections closed", budgetHeapBoundMiB, math.Inf(1))
	s.checkMemoryBounds(t, phase+", once they closed", math.Inf(1), clgrpcBound(s, budgetHeapBoundMiB))
}

// waitForMemory logs the server's RSS, heap and threads once a second
// until both are within their bounds or 20 s have passed (each reading
// collects the whole heap, which stops every thread: once a second is
// enough). It fails the test if the server died meanwhile.
func waitForMemory(t *testing.T, s *target, what string, heapBoundMiB, rssBoundMiB float64) {
	t.Helper()
	start := time.Now()
	for {
		time.Sleep(time.Second)
		if err := s.proc.ExitedEarly(); err != nil {
			t.Fatalf("%s server died: %v", s.name, err)
		}
		rss, heap := s.rssMiB(t), s.heapMiB(t)
		t.Logf("%v %s: RSS %.0f MiB, heap %.0f MiB, %d threads",
			time.Since(start).Round(100*time.Millisecond), what, rss, heap, s.threads(t))
		settled := !(heap > clgrpcBound(s, heapBoundMiB)) && rss <= clgrpcBound(s, rssBoundMiB)
		if settled || time.Since(start) > 20*time.Second {
			return
		}
	}
}
