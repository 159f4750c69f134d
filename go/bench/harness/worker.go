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

	// wait paces an open loop: one timer per worker, reset for each
	// operation that is early, not one allocated per operation.
	wait *time.Timer
}

func (w *worker) reset() {
	w.latency.Reset()
	w.ops, w.errors, w.msgs = 0, 0, 0
	w.firstErr, w.firstErrAt = nil, time.Time{}
}

// loop runs operations until the tickets run out, the deadline (if not zero)
// has passed, or ctx is done. It checks the deadline after each operation
// with the timestamp it took anyway, so a fixed-duration run costs no extra
// clock reads. With a schedule (open loop), each operation waits until it
// is due, none is started once the deadline is reached, and its latency
// counts from when it was due.
func (w *worker) loop(ctx context.Context, op Op, t *tickets, deadline time.Time, sched *schedule) {
	done := ctx.Done()
	for {
		n, ok := t.next()
		if !ok {
			return
		}
		select {
		case <-done:
			return
		default:
		}
		start := time.Now()
		if sched != nil {
			due := sched.due(n)
			if !due.Before(deadline) {
				return
			}
			if early := due.Sub(start); early > 0 {
				if w.wait == nil {
					w.wait = time.NewTimer(early)
				} else {
					w.wait.Reset(early)
				}
				select {
				case <-done:
					w.wait.Stop()
					return
				case <-w.wait.C:
				}
			}
			start = due
		}
		msgs, err := op(ctx, w.id)
		end := time.Now()
		if err != nil {
			w.errors++
			if w.firstErr == nil {
				w.firstErr, w.firstErrAt = err, end
			}
		} else {
			w.ops++
			w.msgs += int64(msgs)
			// Failed operations stay out of the histogram: a fast
			// rejection is not a latency the service achieved.
			recordLatency(w.latency, end.Sub(start))
		}
		// An open loop ends by its schedule: operations due before the
		// deadline run however late, or their latency would go unseen.
		if sched == nil && !deadline.IsZero() && !end.Before(deadline) {
			return
		}
	}
}
