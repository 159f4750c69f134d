package harness

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// tickets hands out permission for one operation at a time. It is the only
// state workers share: one atomic add per operation, no lock. In a
// fixed-iteration run the limit is the iteration count, so workers that
// finish early take more of the work, as goroutines in b.RunParallel do; in
// a fixed-duration run it is the safety cap.
type tickets struct {
	issued atomic.Int64
	limit  int64
}

// next hands out the next ticket's number, counting from 0, and whether it
// is within the limit.
func (t *tickets) next() (int64, bool) {
	n := t.issued.Add(1)
	return n - 1, n <= t.limit
}

// schedule is an open-loop repetition's clock: ticket n is due at
// start + n*interval.
type schedule struct {
	start    time.Time
	interval time.Duration
}

func (s *schedule) due(n int64) time.Time { return s.start.Add(time.Duration(n) * s.interval) }

// started returns how many operations have been started so far.
func (t *tickets) started() int64 { return min(t.issued.Load(), t.limit) }

// worker is one concurrent caller of the Op, with counters that only it
// writes while the clock runs.
type worker struct {
	id      int
	latency *hdrhistogram.Histogram

	ops, errors, msgs int64
	firstErr          error
	firstErrAt        time.Time
}

func (w *worker) reset() {
	w.latency.Reset()
	w.ops, w.errors, w.msgs = 0, 0, 0
	w.firstErr, w.firstErrAt = nil, time.Time{}
}

// loop runs operations back to back (a closed loop) until the tickets run
// out, the deadline (if not zero) has passed, or ctx is done. It checks the
// deadline after each operation with the timestamp it took anyway, so a
// fixed-duration run costs no extra clock reads. (An open loop is run by
// openLoop instead.)
func (w *worker) loop(ctx context.Context, op Op, t *tickets, deadline time.Time) {
	done := ctx.Done()
	for {
		if _, ok := t.next(); !ok {
			return
		}
		select {
		case <-done:
			return
		default:
		}
		start := time.Now()
		msgs, err := op(ctx, w.id)
		end := time.Now()
		w.record(msgs, err, end, end.Sub(start))
		if !deadline.IsZero() && !end.Before(deadline) {
			return
		}
	}
}
