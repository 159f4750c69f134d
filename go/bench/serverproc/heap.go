package serverproc

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A server whose runtime line ends in heap_report=sigwinch answers SIGWINCH
// with one stdout line,
//
//	heap live=N
//
// N being the octets of heap its last garbage collection left: for Go the
// live heap that collection marked, for clgrpc the heap in use right after
// it (which includes the garbage of older generations it did not collect);
// before a server's first collection, its heap in use.
// A server that does not say so is not asked.

// heapReportTimeout bounds the wait for a heap line: a server answers
// within milliseconds, clgrpc's main thread looking every 10 ms.
const heapReportTimeout = 2 * time.Second

// heapReports are the heap lines a server printed: the last one's figure,
// how many there were, and a channel closed at the next one.
type heapReports struct {
	mu    sync.Mutex
	live  float64
	count int
	next  chan struct{}
}

// note keeps line's figure if it is a heap line.
func (h *heapReports) note(line string) {
	rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "heap ")
	if !ok {
		return
	}
	for _, field := range strings.Fields(rest) {
		if v, ok := strings.CutPrefix(field, "live="); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			h.live = float64(n)
			h.count++
			if h.next != nil {
				close(h.next)
				h.next = nil
			}
			return
		}
	}
}

// waitAfter waits until more than count heap lines have been noted, for up
// to timeout, and returns the last one's figure.
func (h *heapReports) waitAfter(count int, timeout time.Duration) (float64, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		if h.count > count {
			live := h.live
			h.mu.Unlock()
			return live, true
		}
		if h.next == nil {
			h.next = make(chan struct{})
		}
		next := h.next
		h.mu.Unlock()
		select {
		case <-next:
		case <-deadline.C:
			return 0, false
		}
	}
}

// HeapReports reports whether the server said it answers SIGWINCH with a
// heap line.
func (p *Process) HeapReports() bool {
	return p.Runtime()["heap_report"] == "sigwinch"
}

// LiveHeap asks the server for its heap line and returns the figure: the
// octets of heap its last collection left. ok is false, with no error,
// for a server that does not answer heap reports.
func (p *Process) LiveHeap() (live float64, ok bool, err error) {
	if !p.HeapReports() {
		return 0, false, nil
	}
	p.heap.mu.Lock()
	count := p.heap.count
	p.heap.mu.Unlock()
	// Through the process handle, which never signals a reused PID.
	if err := p.cmd.Process.Signal(syscall.SIGWINCH); err != nil {
		return 0, false, fmt.Errorf("asking pid %d for its heap: %w", p.PID(), err)
	}
	live, ok = p.heap.waitAfter(count, heapReportTimeout)
	if !ok {
		return 0, false, fmt.Errorf("pid %d printed no heap line within %v of SIGWINCH", p.PID(), heapReportTimeout)
	}
	return live, true, nil
}
