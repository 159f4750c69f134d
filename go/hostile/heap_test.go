package hostile

import (
	"bytes"
	"io"
	"math"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
)

// heapReportPath is where servers started with -heap_report serve their
// heap in use: both RouteGuide servers and the Lisp interop server.
// grpc-go's interop server has no such method; its heap is not read.
const heapReportPath = "/clgrpc.Diagnostics/HeapInUse"

// heapMiB is the server's heap in use after a full collection, or NaN if
// the server does not report it. RSS cannot show an allocation whose pages
// were never touched, and a Lisp heap is a fixed reservation that fails
// once full whatever RSS says: the heap is the measure that can.
//
// The call is a handler like any other: during an attack that queues
// hundreds of handlers, each allocating megabytes, it waits its turn behind
// them (the executor's lanes are first come, first served, not fair between
// connections), which on two cores shared with other tests took over 10 s.
// What this reads is memory, so it may wait longer; latency is asserted by
// the cases that promise it.
func (s *target) heapMiB(t *testing.T) float64 {
	t.Helper()
	ctx, conn, done, err := dialWithin(s.addr, s.creds(), 30*time.Second)
	if err != nil {
		t.Fatalf("%s server: %v", s.name, err)
	}
	defer done()
	var heap wrapperspb.UInt64Value
	err = conn.Invoke(ctx, heapReportPath, &emptypb.Empty{}, &heap, grpc.WaitForReady(true))
	if status.Code(err) == codes.Unimplemented {
		return math.NaN()
	}
	if err != nil {
		t.Fatalf("%s server: reading its heap: %v", s.name, err)
	}
	return float64(heap.GetValue()) / (1 << 20)
}

// checkMemory asserts that RSS and, where the server reports it, the heap
// are within boundMiB, and logs both.
func (s *target) checkMemory(t *testing.T, phase string, boundMiB float64) {
	t.Helper()
	s.checkMemoryBounds(t, phase, boundMiB, boundMiB)
}

// checkMemoryBounds is checkMemory with a bound of its own for the heap,
// which is measured after a full collection and so can be held tighter
// than RSS, which also holds garbage not yet collected.
func (s *target) checkMemoryBounds(t *testing.T, phase string, rssBoundMiB, heapBoundMiB float64) {
	t.Helper()
	rss, heap := s.rssMiB(t), s.heapMiB(t)
	t.Logf("%s: %s server RSS %.0f MiB, heap %.0f MiB", phase, s.name, rss, heap)
	if rss > rssBoundMiB {
		t.Errorf("%s: RSS %.0f MiB is over the bound of %.0f MiB", phase, rss, rssBoundMiB)
	}
	if heap > heapBoundMiB { // false for NaN: a heap not reported
		t.Errorf("%s: the heap, %.0f MiB, is over the bound of %.0f MiB", phase, heap, heapBoundMiB)
	}
}

// serverLog is where a server's output goes in these tests: the test's log,
// and a failure of the test if the server reports its heap exhausted. A
// Lisp process may survive that (the allocation that failed signals), but
// its calls fail meanwhile: no peer may bring it there.
func serverLog(t *testing.T, name string) io.Writer {
	return heapWatch{t: t, name: name, log: serverproc.TestLog(t, name)}
}

type heapWatch struct {
	t    *testing.T
	name string
	log  io.Writer
}

func (w heapWatch) Write(b []byte) (int, error) {
	if bytes.Contains(bytes.ToLower(b), []byte("heap exhausted")) {
		w.t.Errorf("%s server: its heap was exhausted", w.name)
	}
	return w.log.Write(b)
}
