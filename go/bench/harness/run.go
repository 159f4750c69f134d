package harness

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Runner runs one scenario of a suite.
type Runner struct {
	Suite    string // for progress lines, e.g. "routeguide"
	Scenario string // e.g. "unary/clients=10"
	Plan     Plan
	// Server, if set, is the peer process whose CPU time is measured with
	// the client's, e.g. NewProcessCPU(cmd.Process.Pid).
	Server CPUSource
	// Progress receives progress lines, typically os.Stderr; nil for none.
	Progress io.Writer
	// ProgressInterval throttles progress lines; 0 means two seconds.
	ProgressInterval time.Duration
	// AfterRep, if set, is called after each measured repetition (0-based),
	// outside the measured time: where a suite samples what the harness
	// does not, such as the server's memory, once per repetition.
	AfterRep func(rep int)
}

// Run warms up, then measures Plan.Reps repetitions of op. On error
// (cancelled context, unreadable CPU counters) it returns the repetitions
// completed so far together with the error.
func (r *Runner) Run(ctx context.Context, op Op) ([]Rep, error) {
	if err := r.Plan.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Scenario, err)
	}
	workers := make([]*worker, r.Plan.Workers)
	for i := range workers {
		workers[i] = &worker{id: i, latency: newLatencyHistogram()}
	}
	merged := newLatencyHistogram()
	prog := newProgress(r.Progress, r.ProgressInterval, fmt.Sprintf("[%s] %s", r.Suite, r.Scenario))

	if err := r.warmUp(ctx, op, workers, prog); err != nil {
		return nil, err
	}
	reps, err := r.repeat(prog, func(label string) (Rep, error) {
		return r.measure(ctx, op, workers, merged, prog, label)
	})
	if err == nil && r.Plan.Rate > 0 {
		err = checkErrorShare(r.Scenario, reps)
	}
	return reps, err
}

// checkErrorShare fails an open loop in which a repetition's failed
// operations exceeded openLoopMaxErrorShare of those started.
func checkErrorShare(scenario string, reps []Rep) error {
	for i, rep := range reps {
		if a := rep.Attempts(); a > 0 && float64(rep.Errors) > openLoopMaxErrorShare*float64(a) {
			return fmt.Errorf("%s rep %d/%d: %d of %d operations failed (%.2f%%, over the open loop's %g%%): %s",
				scenario, i+1, len(reps), rep.Errors, a, 100*float64(rep.Errors)/float64(a), 100*openLoopMaxErrorShare, rep.FirstError)
		}
	}
	return nil
}

// repeat measures Plan.Reps repetitions with measure, printing progress and
// calling AfterRep after each.
func (r *Runner) repeat(prog *progress, measure func(label string) (Rep, error)) ([]Rep, error) {
	reps := make([]Rep, 0, r.Plan.Reps)
	for i := range r.Plan.Reps {
		label := fmt.Sprintf("rep %d/%d", i+1, r.Plan.Reps)
		rep, err := measure(label)
		if err != nil {
			return reps, fmt.Errorf("%s %s: %w", r.Scenario, label, err)
		}
		reps = append(reps, rep)
		if r.AfterRep != nil {
			r.AfterRep(i)
		}
		if i == r.Plan.Reps-1 {
			prog.force("%s", repSummary(label, rep))
		} else {
			prog.maybe("%s", repSummary(label, rep))
		}
	}
	return reps, nil
}

// warmUp runs the plan's unmeasured warm-up, if any.
func (r *Runner) warmUp(ctx context.Context, op Op, workers []*worker, prog *progress) error {
	if r.Plan.Warmup.IsZero() {
		return nil
	}
	prog.force("warm-up %s", r.Plan.Warmup)
	t := &tickets{limit: r.Plan.maxOps()}
	var deadline time.Time
	if r.Plan.Warmup.Ops > 0 {
		t.limit = r.Plan.Warmup.Ops
	} else {
		deadline = time.Now().Add(r.Plan.Warmup.Duration)
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx, op, t, deadline)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// repSummary is the progress line of a finished repetition, e.g.
// "rep 2/3: 30123 req/s, p99 1.2ms, 0 errors".
func repSummary(label string, rep Rep) string {
	line := fmt.Sprintf("%s: %.0f req/s", label, rep.OpsPerSec())
	if rep.Msgs > rep.Ops {
		line += fmt.Sprintf(", %.0f msg/s", rep.MsgsPerSec())
	}
	return line + fmt.Sprintf(", p99 %v, %d errors", rep.Latency.P99, rep.Errors)
}

// measure runs one repetition and takes its readings. The workers are
// started and parked before the first reading, and a GC runs before it, so
// that neither goroutine start-up nor the previous repetition's garbage is
// charged to this one.
func (r *Runner) measure(ctx context.Context, op Op, workers []*worker, merged *hdrhistogram.Histogram, prog *progress, label string) (Rep, error) {
	for _, w := range workers {
		w.reset()
	}
	t := &tickets{limit: r.Plan.maxOps()}
	if r.Plan.Ops > 0 {
		t.limit = r.Plan.Ops
	}

	release := make(chan struct{})
	var deadline time.Time
	var sched *schedule
	var open *openLoop
	var wg sync.WaitGroup
	if r.Plan.Rate > 0 {
		// The dispatcher's sleeps hold a P (sleeper): one more for the rest.
		procs := runtime.GOMAXPROCS(0)
		runtime.GOMAXPROCS(openLoopProcs(procs))
		defer runtime.GOMAXPROCS(procs)
		open = newOpenLoop(workers, r.Plan.maxInFlight())
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			open.run(ctx, op, t, deadline, sched)
		}()
	} else {
		for _, w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-release
				w.loop(ctx, op, t, deadline)
			}()
		}
	}

	runtime.GC()
	var mem0, mem1 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	client0, err := selfCPU()
	if err != nil {
		abort(t, release, &wg)
		return Rep{}, fmt.Errorf("client CPU: %w", err)
	}
	var server0 CPUTimes
	if r.Server != nil {
		if server0, err = r.Server.CPU(); err != nil {
			abort(t, release, &wg)
			return Rep{}, fmt.Errorf("server CPU: %w", err)
		}
	}

	before := r.readConditions()
	start := time.Now()
	if r.Plan.Duration > 0 {
		deadline = start.Add(r.Plan.Duration)
	}
	if r.Plan.Rate > 0 {
		sched = &schedule{start: start, interval: time.Duration(float64(time.Second) / r.Plan.Rate)}
	}
	close(release) // the workers read deadline and sched only after this
	stopTicker := prog.ticker(label, start, t)
	wg.Wait()
	wall := time.Since(start)
	after := r.readConditions()
	stopTicker()

	client1, err := selfCPU()
	if err != nil {
		return Rep{}, fmt.Errorf("client CPU: %w", err)
	}
	rep := Rep{Wall: wall, ClientCPU: client1.Sub(client0)}
	rep.ClientCores, rep.ServerCores, rep.SharedCPUs = r.sideCores()
	rep.setConditions(before, after, wall)
	if r.Server != nil {
		server1, err := r.Server.CPU()
		if err != nil {
			return Rep{}, fmt.Errorf("server CPU: %w", err)
		}
		rep.ServerCPU, rep.HasServerCPU = server1.Sub(server0), true
	}
	runtime.ReadMemStats(&mem1)
	rep.AllocBytes = mem1.TotalAlloc - mem0.TotalAlloc
	rep.Allocs = mem1.Mallocs - mem0.Mallocs

	var firstAt time.Time
	for _, w := range workers {
		rep.Ops += w.ops
		rep.Errors += w.errors
		rep.Msgs += w.msgs
		if w.firstErr != nil && (firstAt.IsZero() || w.firstErrAt.Before(firstAt)) {
			rep.FirstError, firstAt = w.firstErr.Error(), w.firstErrAt
		}
	}
	mergeLatencies(merged, workers)
	rep.Latency = percentilesOf(merged)
	if open != nil {
		rep.SendLag, rep.HasSendLag = percentilesOf(open.lag), true
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	return rep, nil
}

// abort releases parked workers with no tickets left, so they return
// without running an operation.
func abort(t *tickets, release chan struct{}, wg *sync.WaitGroup) {
	t.limit = 0 // published to the workers by the close
	close(release)
	wg.Wait()
}
