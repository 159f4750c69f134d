package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
)

// suite is the results' suite name, which selects the report's
// "routeguide" layout.
const suite = "routeguide"

// Bounds on a scenario's running time beyond what its plan asks for. The
// harness ends each repetition on time, but only between operations: an
// RPC that a server never answers would hold a worker, and the run, for
// ever. A scenario that overruns its plan by stallGrace is cancelled and
// recorded as failed. A warm-up given as an operation count has no planned
// duration, so it is allowed countWarmupAllowance.
const (
	stallGrace           = 30 * time.Second
	countWarmupAllowance = time.Minute
)

// scenario is one point of a run: an RPC kind at a client count.
type scenario struct {
	kind    rpcKind
	clients int
}

// scenarios lists the run's points, by kind and then by client count, the
// order in which the report shows them.
func (cfg config) scenarios() []scenario {
	var out []scenario
	for _, k := range cfg.rpcs {
		for _, n := range cfg.clients {
			out = append(out, scenario{k, n})
		}
	}
	return out
}

// name is unique among the results of a report, which may combine the Go
// and the Lisp run: hence the implementation first, e.g.
// "go/unary/clients=10".
func (s scenario) name(impl string) string {
	return fmt.Sprintf("%s/%s/clients=%d", impl, s.kind, s.clients)
}

// session is what all scenarios of one run share.
type session struct {
	cfg      config
	addr     string
	server   *serverproc.Process // nil when measuring a running server (-addr)
	cpu      harness.CPUSource   // the server's CPU, or nil
	work     *workload
	progress io.Writer
	// stallGrace is how far a scenario may overrun its plan before it is
	// cancelled: the constant stallGrace, shorter in tests.
	stallGrace time.Duration
}

// params are the scenario's parameters in the results. impl (the server),
// client, rpc and clients are what the report's "routeguide" layout pivots
// on; the Lisp load generator (lisp/routeguide) records "client": "lisp".
func (ss *session) params(s scenario) map[string]any {
	return map[string]any{
		"impl":        ss.cfg.impl,
		"rpc":         string(s.kind),
		"clients":     s.clients,
		"duration":    ss.cfg.duration.String(),
		"conns":       string(ss.cfg.conns),
		"stream_msgs": ss.work.msgsPerCall(s.kind),
		"client":      "go",
	}
}

// plan is the harness plan of one scenario.
func (ss *session) plan(s scenario) harness.Plan {
	return harness.Plan{
		Workers:  s.clients,
		Duration: ss.cfg.duration,
		Warmup:   ss.cfg.bench.Warmup,
		Reps:     ss.cfg.bench.Reps,
	}
}

// timeBudget is how long a scenario may run before it counts as stalled:
// its planned time plus grace.
func timeBudget(p harness.Plan, grace time.Duration) time.Duration {
	warmup := p.Warmup.Duration
	if p.Warmup.Ops > 0 {
		warmup = countWarmupAllowance
	}
	return warmup + time.Duration(p.Reps)*p.Duration + grace
}

// run measures one scenario. It always returns a result: whatever goes
// wrong (no connection, failing calls, a stall, a server crash) becomes a
// result with status "error", so the report shows the failure and the run
// can go on with the next scenario.
func (ss *session) run(ctx context.Context, s scenario) schema.Result {
	name, params := s.name(ss.cfg.impl), ss.params(s)
	if err := ctx.Err(); err != nil {
		return harness.ErrorResult(name, params, fmt.Errorf("not run: %w", err))
	}
	if ss.server != nil {
		if err := ss.server.ExitedEarly(); err != nil {
			return harness.ErrorResult(name, params, fmt.Errorf("not run: %w", err))
		}
	}

	clients, closeConns, err := dial(ctx, ss.addr, s.clients, ss.cfg.conns)
	if err != nil {
		return harness.ErrorResult(name, params, err)
	}
	defer closeConns()

	plan := ss.plan(s)
	budget := timeBudget(plan, ss.stallGrace)
	runCtx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	r := &harness.Runner{Suite: suite, Scenario: name, Plan: plan, Server: ss.cpu, Progress: ss.progress}
	reps, err := r.Run(runCtx, newOp(s.kind, ss.work, clients))
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		err = fmt.Errorf("%w: cancelled after %v, %v past its planned time; an RPC is probably stuck", err, budget, ss.stallGrace)
	}
	if err == nil && ss.server != nil {
		// Calls fail once the server is gone, but a crash late in a
		// repetition could leave too few failures to notice.
		err = ss.server.ExitedEarly()
	}
	return harness.Result(name, params, reps, err)
}
