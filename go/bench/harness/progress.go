package harness

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// defaultProgressInterval keeps a long run visibly alive without burying
// the output of short ones.
const defaultProgressInterval = 2 * time.Second

// progress prints "[suite] scenario ..." lines, at most one per interval
// except for lines that must always appear (the start of the warm-up, the
// last repetition's summary). It is how someone watching `bazel run` knows
// the benchmark is neither stuck nor producing nonsense.
type progress struct {
	w        io.Writer // nil: print nothing
	interval time.Duration
	prefix   string
	now      func() time.Time

	mu   sync.Mutex
	last time.Time
}

func newProgress(w io.Writer, interval time.Duration, prefix string) *progress {
	if interval <= 0 {
		interval = defaultProgressInterval
	}
	return &progress{w: w, interval: interval, prefix: prefix, now: time.Now}
}

// force prints a line regardless of the throttle.
func (p *progress) force(format string, args ...any) {
	p.print(true, format, args...)
}

// maybe prints a line unless one was printed less than an interval ago.
func (p *progress) maybe(format string, args ...any) {
	p.print(false, format, args...)
}

func (p *progress) print(always bool, format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !always && !p.last.IsZero() && now.Sub(p.last) < p.interval {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "%s %s\n", p.prefix, fmt.Sprintf(format, args...))
}

// ticker prints the running throughput of a repetition every interval until
// the returned stop function is called. It reads only the shared ticket
// counter, so it does not slow the workers down.
func (p *progress) ticker(label string, start time.Time, t *tickets) (stop func()) {
	if p.w == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(p.interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				n := t.started()
				p.maybe("%s: %d ops so far, %.0f ops/s", label, n, safeDiv(float64(n), now.Sub(start).Seconds()))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
