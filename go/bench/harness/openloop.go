package harness

import (
	"context"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// An open-loop repetition (Plan.Rate) runs as wrk2 does: one dispatcher
// starts each operation when it is due, on a goroutine of its own, whatever
// the operations before it are doing, and each latency counts from when the
// operation was due. Up to Plan.MaxInFlight run at once; past that the
// dispatcher waits for one to finish, and that wait shows as send lag. So a
// server that stalls builds a queue, as real callers would, instead of
// holding back the callers that would have queued behind it.
//
// Send lag is how late each operation started: the dispatcher's own
// lateness (a timer that fired late, a busy client core, the in-flight cap).
// It is recorded and reported (send_lag_*), because it is booked as
// latency: a figure whose send lag is a large part of it says more about
// the client than the server. The dispatcher sleeps until each due time
// with a high-resolution sleep of the kernel's (see sleeper), as the
// runtime's timers can fire a millisecond late.

// DefaultMaxInFlight bounds an open loop's concurrent operations when
// Plan.MaxInFlight is zero: far more than a healthy server has in flight at
// these rates, so that only a stall reaches it.
const DefaultMaxInFlight = 10_000

// The open loop's error budget: a repetition in which more than this share
// of the operations failed fails the run, since latency percentiles of the
// few that succeeded would hide the failures (failed operations stay out of
// the histogram).
const openLoopMaxErrorShare = 0.001

// openLoop dispatches one repetition. Its operations record into the
// workers' histograms and counters (operation n into worker n mod Workers,
// which is also the op's worker argument), each worker guarded by a lock,
// since several of its operations may finish at once.
type openLoop struct {
	workers  []*worker
	locks    []sync.Mutex
	inFlight chan struct{}
	lag      *hdrhistogram.Histogram // the dispatcher's only
}

func newOpenLoop(workers []*worker, maxInFlight int) *openLoop {
	return &openLoop{
		workers:  workers,
		locks:    make([]sync.Mutex, len(workers)),
		inFlight: make(chan struct{}, maxInFlight),
		lag:      newLatencyHistogram(),
	}
}

// run starts every operation due before deadline on sched, within the
// tickets, and returns once they have all finished or ctx is done and the
// ones started have returned.
func (o *openLoop) run(ctx context.Context, op Op, t *tickets, deadline time.Time, sched *schedule) {
	var wg sync.WaitGroup
	defer wg.Wait()
	s := newSleeper()
	defer s.close()
	done := ctx.Done()
	for {
		n, ok := t.next()
		if !ok {
			return
		}
		due := sched.due(n)
		if !due.Before(deadline) {
			return
		}
		if !s.until(ctx, due) {
			return
		}
		select {
		case o.inFlight <- struct{}{}:
		case <-done:
			return
		}
		started := time.Now()
		recordLatency(o.lag, started.Sub(due))
		i := int(n % int64(len(o.workers)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs, err := op(ctx, i)
			end := time.Now()
			<-o.inFlight
			o.locks[i].Lock()
			o.workers[i].record(msgs, err, end, end.Sub(due))
			o.locks[i].Unlock()
		}()
	}
}

// record counts one finished operation: a failure with its error, or a
// success with its messages and latency.
func (w *worker) record(msgs int, err error, end time.Time, latency time.Duration) {
	if err != nil {
		w.errors++
		if w.firstErr == nil {
			w.firstErr, w.firstErrAt = err, end
		}
		return
	}
	w.ops++
	w.msgs += int64(msgs)
	// Failed operations stay out of the histogram: a fast rejection is not
	// a latency the service achieved.
	recordLatency(w.latency, latency)
}

// sendLagMetrics are an open loop's send lag percentiles per repetition, if
// every repetition recorded them.
func sendLagMetrics(reps []Rep) []schema.Metric {
	for _, r := range reps {
		if !r.HasSendLag {
			return nil
		}
	}
	var out []schema.Metric
	for _, d := range []struct {
		name  string
		value func(Percentiles) time.Duration
	}{
		{schema.MetricSendLagP50, func(p Percentiles) time.Duration { return p.P50 }},
		{schema.MetricSendLagP99, func(p Percentiles) time.Duration { return p.P99 }},
		{schema.MetricSendLagMax, func(p Percentiles) time.Duration { return p.Max }},
	} {
		values := make([]float64, len(reps))
		for i, r := range reps {
			values[i] = float64(d.value(r.SendLag))
		}
		out = append(out, schema.NewMetric(d.name, schema.UnitNanoseconds, schema.LowerIsBetter, values))
	}
	return out
}
