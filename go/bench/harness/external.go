package harness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// External is a client in another process, such as a load generator
// written in another language, that makes a scenario's calls itself and
// reports raw readings of each repetition. The Runner measures around it
// what it measures around its own workers (the server's CPU, the host's
// CPU pressure) and turns the readings into a Rep the same way, so that
// every client's results are computed by this one harness.
//
// A repetition takes three steps, so that the Runner's readings span the
// operations only, as they do for its own workers: Prepare readies the
// client (its garbage collected, its callers created and parked), Start
// runs the operations and returns the client's readings, and Latencies
// returns their latencies after the Runner has read the server.
type External interface {
	// WarmUp runs the unmeasured warm-up w (not zero).
	WarmUp(ctx context.Context, w Warmup) error
	// Prepare readies one repetition of p: p.Duration, open-loop at
	// p.Rate if that is positive, at most p.MaxOps operations (0:
	// DefaultMaxOps).
	Prepare(ctx context.Context, p Plan) error
	// Start runs the prepared repetition.
	Start(ctx context.Context) (ExternalRep, error)
	// Latencies are the latencies of the repetition last started.
	Latencies(ctx context.Context) (LogBuckets, error)
}

// ExternalSendLag is an External client that also reports, in an open loop,
// how late each operation started after it was due: read after Latencies,
// for the same repetition.
type ExternalSendLag interface {
	SendLag() LogBuckets
}

// ExternalRep is what an External client observed in one repetition.
type ExternalRep struct {
	Wall time.Duration
	// CPU is the client process's own CPU time over the repetition, read
	// as this process reads its own (getrusage, every thread) around its
	// callers' release and return.
	CPU               CPUTimes
	Ops, Errors, Msgs int64
	FirstError        string
	// AllocBytes is what the client process allocated; it counts no
	// allocations, so a Rep made from it has no allocs_per_op.
	AllocBytes uint64
}

// check rejects readings no repetition can have.
func (e ExternalRep) check() error {
	switch {
	case e.Wall <= 0:
		return errors.New("the client reported no wall time")
	case e.Ops < 0 || e.Errors < 0 || e.Msgs < 0 || e.CPU.User < 0 || e.CPU.System < 0:
		return fmt.Errorf("the client reported negative readings: %+v", e)
	}
	return nil
}

// LogBuckets is a latency histogram in gRPC's log-bucket form: with
// m = 1 + Resolution, bucket 0 counts latencies below m nanoseconds and
// bucket n > 0 those in [m^n, m^(n+1)). Counts maps bucket to count.
type LogBuckets struct {
	Resolution float64
	Counts     map[int]int64
}

// record adds the latencies to h, each at its bucket's midpoint, which is
// within Resolution/2 of the latency it stands for; beyond the tracked
// range, at its end, as recordLatency clamps.
func (b LogBuckets) record(h *hdrhistogram.Histogram) error {
	if len(b.Counts) > 0 && !(b.Resolution > 0 && b.Resolution <= 0.1) {
		return fmt.Errorf("latency buckets of resolution %g: want more than 0 and at most 0.1", b.Resolution)
	}
	m := 1 + b.Resolution
	for i, n := range b.Counts {
		if i < 0 || n < 0 {
			return fmt.Errorf("latency bucket %d with count %d", i, n)
		}
		v := int64(minTrackedLatency)
		if i > 0 {
			// In floating point first: a bucket far out would overflow
			// an int64.
			f := math.Pow(m, float64(i)) * (1 + b.Resolution/2)
			v = maxTrackedLatency
			if f < float64(maxTrackedLatency) {
				v = max(int64(f), minTrackedLatency)
			}
		}
		if err := h.RecordValues(v, n); err != nil {
			return err
		}
	}
	return nil
}

// RunExternal is Run for an External client: the plan's warm-up, then
// Plan.Reps repetitions, each read as Run reads its own. Only
// fixed-duration plans can be run this way.
func (r *Runner) RunExternal(ctx context.Context, c External) ([]Rep, error) {
	if err := r.Plan.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Scenario, err)
	}
	if r.Plan.Ops > 0 {
		return nil, fmt.Errorf("%s: an external client runs fixed-duration repetitions only", r.Scenario)
	}
	prog := newProgress(r.Progress, r.ProgressInterval, fmt.Sprintf("[%s] %s", r.Suite, r.Scenario))
	if !r.Plan.Warmup.IsZero() {
		prog.force("warm-up %s", r.Plan.Warmup)
		if err := c.WarmUp(ctx, r.Plan.Warmup); err != nil {
			return nil, fmt.Errorf("%s warm-up: %w", r.Scenario, err)
		}
	}
	merged := newLatencyHistogram()
	reps, err := r.repeat(prog, func(string) (Rep, error) {
		return r.measureExternal(ctx, c, merged)
	})
	if err == nil && r.Plan.Rate > 0 {
		err = checkErrorShare(r.Scenario, reps)
	}
	return reps, err
}

// measureExternal runs one repetition of c, with the server's CPU and the
// host's CPU stall read just around Start: the readings then also span the
// command to start and the reply, a pipe's round trip each way.
func (r *Runner) measureExternal(ctx context.Context, c External, merged *hdrhistogram.Histogram) (Rep, error) {
	if err := c.Prepare(ctx, r.Plan); err != nil {
		return Rep{}, err
	}
	var server0 CPUTimes
	var err error
	if r.Server != nil {
		if server0, err = r.Server.CPU(); err != nil {
			return Rep{}, fmt.Errorf("server CPU: %w", err)
		}
	}
	before := r.readConditions()
	ext, err := c.Start(ctx)
	after := r.readConditions()
	if err != nil {
		return Rep{}, err
	}
	if err := ext.check(); err != nil {
		return Rep{}, err
	}
	rep := Rep{
		Wall: ext.Wall, ClientCPU: ext.CPU,
		Ops: ext.Ops, Errors: ext.Errors, Msgs: ext.Msgs, FirstError: ext.FirstError,
		AllocBytes: ext.AllocBytes, AllocsUnmeasured: true,
	}
	rep.ClientCores, rep.ServerCores, rep.SharedCPUs = r.sideCores()
	rep.setConditions(before, after, ext.Wall)
	if r.Server != nil {
		server1, err := r.Server.CPU()
		if err != nil {
			return Rep{}, fmt.Errorf("server CPU: %w", err)
		}
		rep.ServerCPU, rep.HasServerCPU = server1.Sub(server0), true
	}
	latencies, err := c.Latencies(ctx)
	if err != nil {
		return Rep{}, err
	}
	merged.Reset()
	if err := latencies.record(merged); err != nil {
		return Rep{}, fmt.Errorf("the client's latencies: %w", err)
	}
	if n := merged.TotalCount(); n != ext.Ops {
		return Rep{}, fmt.Errorf("the client reported %d successful operations but %d latencies", ext.Ops, n)
	}
	rep.Latency = percentilesOf(merged)
	if s, ok := c.(ExternalSendLag); ok && r.Plan.Rate > 0 {
		lag := newLatencyHistogram()
		if err := s.SendLag().record(lag); err != nil {
			return Rep{}, fmt.Errorf("the client's send lag: %w", err)
		}
		// Every call started, failed ones too, was due and started late or not.
		if n := lag.TotalCount(); n != ext.Ops+ext.Errors {
			return Rep{}, fmt.Errorf("the client started %d calls but reported %d send lags", ext.Ops+ext.Errors, n)
		}
		rep.SendLag, rep.HasSendLag = percentilesOf(lag), true
	}
	return rep, ctx.Err()
}
