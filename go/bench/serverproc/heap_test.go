package serverproc

import (
	"strings"
	"testing"
	"time"
)

// A server that says heap_report=sigwinch is asked with SIGWINCH, and each
// answer is the figure of its next heap line, not an earlier one.
func TestLiveHeapAsksTheServer(t *testing.T) {
	p, log := loggedServer(t, `n=2048; trap 'n=$((n*2)); echo heap live=$n' WINCH
echo listening on 127.0.0.1:1; echo runtime cpus=1 heap_report=sigwinch; echo end
while :; do sleep 0.05; done`, "end\n")
	for _, want := range []float64{4096, 8192} {
		live, ok, err := p.LiveHeap()
		if err != nil || !ok || live != want {
			t.Fatalf("LiveHeap() = %v, %v, %v; want %v", live, ok, err, want)
		}
	}
	s, err := p.Sample()
	if err != nil || s.LiveHeap != 16384 {
		t.Errorf("Sample() = %+v, %v; want the live heap of a third report", s, err)
	}
	if !strings.Contains(log.String(), "heap live=4096\n") {
		t.Errorf("the heap line did not reach the log: %q", log.String())
	}
}

// A server that does not say it answers SIGWINCH is not asked; one that
// says so and stays silent is an error, after a bounded wait.
func TestLiveHeapOnlyWhereSaid(t *testing.T) {
	p, _ := loggedServer(t, `echo listening on 127.0.0.1:1; echo runtime cpus=1; echo end; exec sleep 30`, "end\n")
	if live, ok, err := p.LiveHeap(); ok || err != nil || live != 0 {
		t.Errorf("LiveHeap() = %v, %v, %v; want nothing asked", live, ok, err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := p.ExitedEarly(); err != nil {
		t.Errorf("the server exited: %v", err)
	}

	silent, _ := loggedServer(t, `trap '' WINCH; echo listening on 127.0.0.1:1; echo runtime cpus=1 heap_report=sigwinch; echo end
while :; do sleep 0.05; done`, "end\n")
	start := time.Now()
	if _, ok, err := silent.LiveHeap(); ok || err == nil {
		t.Errorf("LiveHeap() of a silent server: ok=%v err=%v, want an error", ok, err)
	}
	if waited := time.Since(start); waited > heapReportTimeout+time.Second {
		t.Errorf("waited %v for a silent server", waited)
	}
}
