package runtimeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/metrics"
	"syscall"
)

// HeapReportKey ends the runtime line of a server that answers SIGWINCH
// with a heap line (HeapReports): a load generator asks only a server that
// says so. SIGWINCH, because it is harmless to a process that does not
// handle it (ignored by default), and SBCL defers its handler to a safe
// point as it does SIGINT's, where SIGWINCH's would run in the middle of an
// allocation or a garbage collection.
const HeapReportKey = "heap_report=sigwinch"

// HeapLine is "heap live=N": the octets of heap the last collection found
// live (runtime/metrics /gc/heap/live:bytes), or before the first
// collection the heap's objects, live or not yet collected
// (/memory/classes/heap/objects:bytes), as clgrpc reports its heap in use
// then. Reading them changes nothing.
func HeapLine() string {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	live := s[0].Value.Uint64()
	if live == 0 {
		live = s[1].Value.Uint64()
	}
	return fmt.Sprintf("heap live=%d", live)
}

// HeapReports are a server's answers to SIGWINCH. The signal is caught from
// CatchHeapReports on, so that one sent as soon as the runtime line is read
// cannot kill the server; the lines go out once Serve runs, after the
// announcement, so that they never come before it.
type HeapReports struct{ signals chan os.Signal }

// CatchHeapReports catches SIGWINCH from now on. Announce the server with
// HeapReportKey at the end of its runtime line, then call Serve.
func CatchHeapReports() *HeapReports {
	h := &HeapReports{signals: make(chan os.Signal, 1)}
	signal.Notify(h.signals, syscall.SIGWINCH)
	return h
}

// Serve writes HeapLine to w for each SIGWINCH, until ctx is done; then it
// stops catching the signal. It must be w's only writer meanwhile.
func (h *HeapReports) Serve(ctx context.Context, w io.Writer) {
	go func() {
		defer signal.Stop(h.signals)
		for {
			select {
			case <-ctx.Done():
				return
			case <-h.signals:
				fmt.Fprintln(w, HeapLine())
				if f, ok := w.(interface{ Flush() error }); ok {
					f.Flush()
				}
			}
		}
	}()
}
