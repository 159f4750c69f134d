package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
)

// Bounds on a cell beyond its plan: a repetition that overruns it by
// stallGrace is cancelled and fails the cell (a call the server never
// answers); long polls are given pollSettle to reach the server before
// anything is measured beside them.
const (
	stallGrace           = 30 * time.Second
	countWarmupAllowance = time.Minute
	pollSettle           = 200 * time.Millisecond
)

// measureScenario measures s against every server, the servers taking
// turns repetition by repetition (harness.InTurns), so that a ratio of two
// cells compares servers, not moments. Each cell's connections (and long
// polls) stay open from its first repetition to its last.
func measureScenario(ctx context.Context, cfg config, servers []*server, s scenario, log io.Writer) []schema.Result {
	var cells []*cell
	for _, srv := range servers {
		if cfg.measures(srv.spec, s) {
			cells = append(cells, open(ctx, cfg, srv, s))
		}
	}
	harness.InTurns(len(cells), cfg.bench.Reps, func(i, round int) {
		cells[i].measure(ctx, cfg, log, harness.TurnLabel(cells[i].name, round, cfg.bench.Reps))
	})
	out := make([]schema.Result, len(cells))
	for i, c := range cells {
		out[i] = c.result()
	}
	return out
}

// measures reports whether scenario s is measured against the server of
// spec: every server but a variant outside -variant_handlers.
func (cfg config) measures(spec serverSpec, s scenario) bool {
	return !spec.Variant || cfg.variantHandlers == nil || cfg.variantHandlers[s.handler()]
}

// cell is one scenario against one server.
type cell struct {
	srv    *server
	s      scenario
	name   string
	params map[string]any
	conns  conns
	op     harness.Op
	polls  *pollers // the long polls, in the long-poll mix
	warmed bool
	reps   []harness.Rep
	// pollsDone and pollsFailed are, per repetition, the long polls that
	// ended since the previous one (the last also those that ended after
	// it, until the cell closed).
	pollsDone, pollsFailed []float64
	// samples are what the server held after each repetition.
	samples []serverproc.Sample
	err     error // the first failure; nothing more is measured after it
}

// open connects a cell to its server, and starts its long polls.
func open(ctx context.Context, cfg config, srv *server, s scenario) *cell {
	c := &cell{srv: srv, s: s, name: s.name(srv.spec.Label), params: s.params(srv.spec.Label, cfg)}
	if err := srv.proc.ExitedEarly(); err != nil {
		c.err = fmt.Errorf("not run: %w", err)
		return c
	}
	c.conns, c.err = dial(ctx, srv.proc.Addr(), s.conns)
	if c.err != nil {
		return c
	}
	c.op = c.conns.op(s.kind)
	if s.longPoll {
		c.polls = startPolls(ctx, c.conns, cfg.polls, cfg.poll)
		time.Sleep(pollSettle)
	}
	return c
}

// measure runs one more repetition, after a warm-up the first time, bounded
// in time.
func (c *cell) measure(ctx context.Context, cfg config, log io.Writer, label string) {
	if c.err != nil {
		return
	}
	plan := harness.Plan{Workers: c.s.callers, Duration: cfg.duration, Warmup: cfg.bench.Warmup, Reps: 1}
	if c.warmed {
		plan.Warmup = harness.Warmup{}
	}
	c.warmed = true
	budget := plan.Warmup.Duration + plan.Duration + stallGrace
	if plan.Warmup.Ops > 0 {
		budget += countWarmupAllowance
	}
	runCtx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	r := &harness.Runner{Suite: suite, Scenario: label, Plan: plan, Server: c.srv.cpu, Progress: log}
	reps, err := r.Run(runCtx, c.op)
	c.reps = append(c.reps, reps...)
	if len(reps) > 0 {
		// Left out of the result unless every repetition was sampled.
		if sample, err := c.srv.proc.Sample(); err == nil {
			c.samples = append(c.samples, sample)
		}
	}
	if c.polls != nil && len(reps) > 0 {
		done, failed := c.polls.take()
		c.pollsDone = append(c.pollsDone, float64(done))
		c.pollsFailed = append(c.pollsFailed, float64(failed))
	}
	if err == nil {
		// A crash late in a repetition may leave too few failed calls to
		// notice.
		err = c.srv.proc.ExitedEarly()
	}
	c.err = err
}

// result ends the cell's long polls, closes its connections and returns
// its result; the long-poll mix adds the polls completed and failed.
func (c *cell) result() schema.Result {
	var pollErr error
	if c.polls != nil {
		var done, failed int64
		done, failed, pollErr = c.polls.finish()
		if n := len(c.pollsDone); n > 0 {
			c.pollsDone[n-1] += float64(done)
			c.pollsFailed[n-1] += float64(failed)
		}
	}
	c.conns.close()
	if c.conns == nil {
		return harness.ErrorResult(c.name, c.params, c.err)
	}
	res := harness.Result(c.name, c.params, c.reps, c.err)
	res.Metrics = append(res.Metrics, serverproc.SampleMetrics(len(c.reps), c.samples, true)...)
	if len(c.pollsDone) > 0 && len(c.pollsDone) == len(c.reps) {
		res.Metrics = append(res.Metrics,
			schema.NewMetric(schema.MetricPolls, schema.UnitCount, schema.HigherIsBetter, c.pollsDone),
			schema.NewMetric(schema.MetricPollErrors, schema.UnitCount, schema.LowerIsBetter, c.pollsFailed))
		if pollErr != nil && res.Error == "" {
			res.Error = "a long poll failed: " + pollErr.Error()
		}
	}
	return res
}
