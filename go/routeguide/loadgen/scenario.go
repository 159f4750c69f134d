package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// suite is the results' suite name, which selects the report's
// "routeguide" layout.
const suite = "routeguide"

// openLoopSuite names the results of an open-loop run (-rate), which the
// report shows apart: latency at a fixed offered load, not throughput.
const openLoopSuite = "routeguide_openloop"

// sharedConnSuite names the results of a closed-loop run whose clients all
// share one connection (-conns shared): many streams on one HTTP/2
// connection, which the report shows and judges apart from the grid of a
// connection per client.
const sharedConnSuite = "routeguide_shared"

// cappedSuite names the results of a run whose servers were capped below a
// core (-server_cpu_quota), so that the load generator had headroom: the
// report judges their throughput and CPU per request, never their latency.
const cappedSuite = "routeguide_capped"

// Bounds on a scenario's running time beyond what its plan asks for. The
// harness ends each repetition on time, but only between operations: an
// RPC that a server never answers would hold a worker, and the run, for
// ever. A scenario that overruns its plan by stallGrace is cancelled and
// recorded as failed. A warm-up given as an operation count has no planned
// duration, so it is allowed countWarmupAllowance.
const (
	stallGrace           = 30 * time.Second
	countWarmupAllowance = time.Minute
	// budgetSlack is how early a call may end at the scenario's deadline
	// on a clock other than this process's (the server's, from the
	// grpc-timeout it was sent) and still count as having reached it.
	budgetSlack = 50 * time.Millisecond
)

// scenario is one point of a run: an RPC kind at a client count.
type scenario struct {
	kind    rpcKind
	clients int
	total   int          // connections in all (connscale suite), else 0
	rate    float64      // requests per second offered, open loop; 0 for a closed loop
	quota   cgroup.Quota // the CPU cap the servers are under
}

// scenarios lists the run's points, by CPU cap, kind and then client count,
// the order in which the report shows them; each cap's cells run together,
// so that the servers are started afresh under it once.
func (cfg config) scenarios() []scenario {
	quotas := cfg.quotas
	if len(quotas) == 0 {
		quotas = []cgroup.Quota{{}}
	}
	var out []scenario
	for _, q := range quotas {
		for _, s := range cfg.pointScenarios() {
			s.quota = q
			out = append(out, s)
		}
	}
	return out
}

// pointScenarios are the scenarios of one CPU cap.
func (cfg config) pointScenarios() []scenario {
	var out []scenario
	totals := cfg.totalConns
	if len(totals) == 0 {
		totals = []int{0}
	}
	rates := cfg.rates
	if len(rates) == 0 {
		rates = []float64{0}
	}
	for _, t := range totals {
		for _, k := range cfg.rpcs {
			for _, n := range cfg.clients {
				for _, r := range rates {
					out = append(out, scenario{kind: k, clients: n, total: t, rate: r})
				}
			}
		}
	}
	return out
}

// name is unique among the results of a report, which may combine the Go
// and the Lisp run: hence the implementation first, e.g.
// "go/unary/clients=10".
func (s scenario) name(impl string) string {
	name := fmt.Sprintf("%s/%s/clients=%d", impl, s.kind, s.clients)
	if s.total > 0 {
		name += fmt.Sprintf("/conns=%d", s.total)
	}
	if s.rate > 0 {
		name += fmt.Sprintf("/rate=%g", s.rate)
	}
	return name
}

// session is what all scenarios against one server share.
type session struct {
	cfg      config
	impl     string // the server's label: -impl, or -rival_impl
	addr     string
	lisp     *lispClient         // makes the calls when set (-lisp_client), shared by all sessions
	server   *serverproc.Process // nil when measuring a running server (-addr)
	spec     serverSpec          // what server was started, and on which CPUs
	cpus     cpuset.Set
	cpu      harness.CPUSource // the server's CPU, or nil
	cpuClock string            // where cpu reads it (harness.CPUClockCgroup, ...)
	quota    cgroup.Quota      // the CPU cap its server was started under
	work     *workload
	progress io.Writer
	// stallGrace is how far a scenario may overrun its plan before it is
	// cancelled: the constant stallGrace, shorter in tests.
	stallGrace time.Duration
}

// client names the client that makes the calls, "go" or "lisp".
func (ss *session) client() string {
	if ss.cfg.lispClient != "" {
		return "lisp"
	}
	return "go"
}

// scenarioName is s.name, and "/client=lisp" after it when the Lisp client
// makes the calls, so that one report can hold both clients' results.
func (ss *session) scenarioName(s scenario) string {
	name := s.name(ss.impl)
	if ss.cfg.conns == shared {
		name += "/conns=shared"
	}
	if ss.cfg.tls.on {
		name += "/tls"
	}
	switch q := s.quota; {
	case ss.cfg.sweep() && !q.Capped():
		name += "/cpu_quota=none"
	case ss.cfg.sweep():
		name += fmt.Sprintf("/cpu_quota=%g/cpu_period=%v", q.Cores, q.Period)
	case q.Capped():
		name += fmt.Sprintf("/cpu_quota=%g", q.Cores)
		if q.Period != cgroup.DefaultPeriod {
			name += fmt.Sprintf("/cpu_period=%v", q.Period)
		}
	}
	if ss.client() == "lisp" {
		name += "/client=lisp"
	}
	return name
}

// params are the scenario's parameters in the results. impl (the server),
// client, rpc and clients are what the report's "routeguide" layout pivots
// on.
func (ss *session) params(s scenario) map[string]any {
	p := map[string]any{
		"impl":        ss.impl,
		"rpc":         string(s.kind),
		"clients":     s.clients,
		"duration":    ss.cfg.duration.String(),
		"conns":       string(ss.cfg.conns),
		"stream_msgs": ss.work.msgsPerCall(s.kind),
		"client":      ss.client(),
		"transport":   ss.cfg.tls.name(),
	}
	if s.total > 0 {
		p["total_conns"] = s.total
		p["idle_conns"] = s.total - s.clients
	}
	if s.rate > 0 {
		p["rate"] = s.rate
	}
	if ss.cfg.capped() {
		p["server_cpu_quota"] = s.quota.Cores
		p["server_cpu_period"] = s.quota.PeriodLabel()
	}
	return p
}

// plan is the harness plan of one scenario.
func (ss *session) plan(s scenario) harness.Plan {
	return harness.Plan{
		Workers:  s.clients,
		Duration: ss.cfg.duration,
		Rate:     s.rate,
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

// interleave measures scenario s against every session's server. With more
// than one, the servers take turns repetition by repetition
// (harness.InTurns), as the tournament's competitors do, so that the ratio
// of two cells compares servers, not moments. It returns a result per
// session, in session order.
//
// A cell's connections normally stay open from its first repetition to its
// last, and it warms up once. At connection scale each cell (or turn) starts
// its server afresh (cell.connect), and the cells run in a random order. At connection scale with more than one
// server, each turn connects, warms up, measures and disconnects instead,
// and the next turn starts once the server has closed them: this load
// generator holds the client end of every connection, and two servers'
// 10,000 would take it past its descriptor limit; and while one server is
// measured, the other should not be accepting, holding or closing
// connections on the same two cores.
func interleave(ctx context.Context, sessions []*session, s scenario) []schema.Result {
	reps := sessions[0].cfg.bench.Reps
	perTurn := len(sessions) > 1 && s.total > 0
	cells := make([]*cell, len(sessions))
	for i, ss := range sessions {
		cells[i] = ss.newCell(s)
		if perTurn {
			cells[i].params["connections"] = "per turn"
		}
	}
	if !perTurn {
		for _, c := range cells {
			c.connect(ctx)
		}
	}
	if len(cells) == 1 {
		cells[0].measure(ctx, reps, cells[0].name)
	} else {
		harness.InTurns(len(cells), reps, func(i, round int) {
			c := cells[i]
			if perTurn {
				c.connect(ctx)
				defer c.awaitServerClosed(ctx)
				defer c.disconnect()
			}
			c.measure(ctx, 1, harness.TurnLabel(c.name, round, reps))
		})
	}
	out := make([]schema.Result, len(cells))
	for i, c := range cells {
		out[i] = c.result()
	}
	return out
}

// cell is one scenario against one server: its connections while they are
// open, and what has been measured so far.
type cell struct {
	ss     *session
	s      scenario
	name   string
	params map[string]any
	// connected is set once the cell's connections have opened; then op
	// makes the calls, or ext with the Lisp client.
	connected bool
	op        harness.Op
	ext       *lispCell
	close     []func()
	warmed    bool
	// socketBaseline is the started server's open sockets before the
	// cell's connections were last opened (-1: not known).
	socketBaseline int
	reps           []harness.Rep
	// process is the started server's RSS and threads after each
	// repetition, in step with reps.
	process []serverproc.Sample
	scale   []scaleSample
	// marginal is the server's anonymous RSS grown per connection opened
	// (the clients' and the idle ones), each time the cell's connections
	// opened.
	marginal []float64
	err      error // the first failure; nothing more is measured after it
}

// newCell is scenario s against the session's server, not yet connected.
func (ss *session) newCell(s scenario) *cell {
	return &cell{ss: ss, s: s, name: ss.scenarioName(s), params: ss.params(s), socketBaseline: -1}
}

// connect opens the cell's client connections (and idle connections) to
// the session's server; the next repetition warms up first. A failure (the
// run cancelled, the server gone, a connection refused) is kept in the cell,
// which then measures nothing more and reports it: the run goes on with the
// next scenario.
func (c *cell) connect(ctx context.Context) {
	if c.err != nil {
		return
	}
	ss, s := c.ss, c.s
	first := !c.connected
	if err := ctx.Err(); err != nil {
		c.err = fmt.Errorf("not run: %w", err)
		return
	}
	if s.total > 0 && ss.owned() {
		// Each connection-scale cell, or turn, starts from a fresh server:
		// a heap that earlier connections grew would hold the next ones
		// for free, and what one more costs could not be read. Restarted
		// before anything else is checked, so that a server that crashed
		// in an earlier cell fails that cell only, and one that could not
		// be restarted is tried again by the next.
		if err := ss.restart(ctx); err != nil {
			c.err = fmt.Errorf("not run: %w", err)
			return
		}
	}
	if ss.owned() && s.quota != ss.quota {
		// A new CPU cap: the server starts afresh, born in its groups, so
		// that it runs under the cap from its first instruction and no heap
		// carries over from the cap before.
		ss.quota = s.quota
		if err := ss.restart(ctx); err != nil {
			// The next cell of this cap tries again.
			ss.quota = cgroup.Quota{Cores: -1}
			c.err = fmt.Errorf("not run: %w", err)
			return
		}
	}
	if ss.owned() && ss.server == nil {
		c.err = errors.New("not run: the server is not running (it could not be restarted)")
		return
	}
	if ss.server != nil {
		if err := ss.server.ExitedEarly(); err != nil {
			c.err = fmt.Errorf("not run: %w", err)
			return
		}
	}
	// A process with no socket at all is not the one serving (a wrapper
	// whose server runs elsewhere): there is nothing of its to count.
	if n, ok := ss.serverSockets(); ok && n > 0 {
		c.socketBaseline = n
	}
	// What the connections cost is read before any load runs on them, so
	// that the heap the calls grow is not counted: from before the first
	// is opened to after the last has settled.
	before, okBefore := 0.0, false
	if s.total > 0 {
		// After the same settling time as the reading after the
		// connections, so that what a server does in its first second
		// (its heap growing to its working size) is not charged to them.
		time.Sleep(idleSettleBeforeMeasure)
		before, okBefore = ss.serverAnonRSS()
	}
	var clients []pb.RouteGuideClient
	if ss.lisp != nil {
		// Each call is bounded within the stall grace, so that a server
		// that never answers fails calls before the scenario is cancelled.
		ext, err := ss.lisp.open(ctx, ss.addr, s, ss.cfg.conns, ss.cfg.streamMsgs, ss.stallGrace/2)
		if err != nil {
			c.err = err
			return
		}
		c.ext = ext
		c.close = append(c.close, func() {
			if err := ext.close(); err != nil {
				fmt.Fprintf(ss.progress, "[%s] %s: closing the Lisp client's connections: %v\n", suite, c.name, err)
			}
		})
	} else {
		conns, closeConns, err := dial(ctx, ss.addr, s.clients, ss.cfg.conns, &ss.cfg.tls)
		if err != nil {
			c.err = err
			return
		}
		clients = conns
		c.close = append(c.close, closeConns)
	}
	if idle := s.total - s.clients; idle > 0 {
		closeIdle, err := openIdle(ctx, ss.addr, idle, &ss.cfg.tls)
		if err != nil {
			c.err = err
			return
		}
		c.close = append(c.close, closeIdle)
	}
	if s.total > 0 {
		time.Sleep(idleSettleBeforeMeasure) // let the server set up every one
		opened := s.total - s.clients + ss.clientConns(s)
		// Only where the process is the one holding the sockets: a wrapper's
		// memory says nothing about the connections.
		if after, ok := ss.serverAnonRSS(); ok && okBefore && before > 0 && c.socketBaseline >= 0 {
			perConn := (after - before) / float64(opened)
			c.marginal = append(c.marginal, perConn)
			if first || perConn < 0 {
				fmt.Fprintf(ss.progress, "[%s] %s: %d connections added %.1f KiB of server anonymous RSS each\n",
					suite, c.name, opened, perConn/1024)
			}
		}
	}
	if ss.lisp == nil {
		c.op = newOp(s.kind, ss.work, clients)
	}
	c.connected, c.warmed = true, false
}

// disconnect closes the cell's connections, newest first.
func (c *cell) disconnect() {
	for i := len(c.close) - 1; i >= 0; i-- {
		c.close[i]()
	}
	c.close = nil
}

// measure runs n more repetitions, after a warm-up if none has run on the
// cell's connections yet; label names them in progress lines and errors.
// Every repetition is bounded in time: a call that a server never answers
// fails the cell instead of hanging the run.
func (c *cell) measure(ctx context.Context, n int, label string) {
	if c.err != nil {
		return
	}
	ss := c.ss
	plan := ss.plan(c.s)
	plan.Reps = n
	if c.warmed {
		plan.Warmup = harness.Warmup{}
	}
	c.warmed = true
	budget := timeBudget(plan, ss.stallGrace)
	runCtx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	r := &harness.Runner{Suite: suite, Scenario: label, Plan: plan, Server: ss.cpu, Progress: ss.progress}
	r.AfterRep = func(int) {
		if rss, ok := c.sampleProcess(); ok && c.s.total > 0 {
			c.sampleScale(rss)
		}
	}
	var reps []harness.Rep
	var err error
	if c.ext != nil {
		reps, err = r.RunExternal(runCtx, c.ext)
	} else {
		reps, err = r.Run(runCtx, c.op)
	}
	c.reps = append(c.reps, reps...)
	// The budget ran out while the caller's context is alive: a call outlived
	// the plan. The runner may report the context's error, or nothing at
	// all: a server that honours the call's grpc-timeout ends the call on
	// its own clock, and the runner can finish on that failed call before
	// this context's timer has fired, leaving only a failed repetition.
	deadline, _ := runCtx.Deadline()
	budgetSpent := errors.Is(runCtx.Err(), context.DeadlineExceeded) || !time.Now().Before(deadline.Add(-budgetSlack))
	if budgetSpent && ctx.Err() == nil {
		cause := err
		if cause == nil {
			cause = context.DeadlineExceeded
			if n := len(reps); n > 0 && reps[n-1].FirstError != "" {
				cause = errors.New(reps[n-1].FirstError)
			}
		}
		err = fmt.Errorf("%w: cancelled after %v, %v past its planned time; an RPC is probably stuck", cause, budget, ss.stallGrace)
	}
	if err == nil && ss.server != nil {
		// Calls fail once the server is gone, but a crash late in a
		// repetition could leave too few failures to notice.
		err = ss.server.ExitedEarly()
	}
	if err == nil {
		err = c.checkHeld()
	}
	c.err = err
}

// sampleScale reads the server's memory and connections after a
// connection-scale repetition.
func (c *cell) sampleScale(rss float64) {
	sample := scaleSample{rss: rss, held: -1}
	if n, ok := c.ss.serverSockets(); ok && c.socketBaseline >= 0 {
		sample.held = float64(n - c.socketBaseline)
	}
	c.scale = append(c.scale, sample)
}

// checkHeld fails a connection-scale cell whose server, after a
// repetition, held fewer sockets than the cell opened (its clients' and its
// idle connections: the count is of every socket beyond the baseline): it
// refused or dropped some, and its figures are not for the count claimed.
func (c *cell) checkHeld() error {
	opened := c.s.total - c.s.clients + c.ss.clientConns(c.s)
	if len(c.scale) == 0 || c.s.total <= 0 {
		return nil
	}
	if held := c.scale[len(c.scale)-1].held; held >= 0 && int(held) < opened {
		return fmt.Errorf("the server held %d connections after the repetition, fewer than the cell's %d", int(held), opened)
	}
	return nil
}

// result closes the cell's connections and returns its result.
func (c *cell) result() schema.Result {
	c.disconnect()
	if !c.connected {
		return harness.ErrorResult(c.name, c.params, c.err)
	}
	res := harness.Result(c.name, c.params, c.reps, c.err)
	if res.Status != schema.StatusOK {
		return res
	}
	// A connection-scale cell's RSS is in its scale metrics.
	res.Metrics = append(res.Metrics, serverproc.SampleMetrics(len(c.reps), c.process, c.s.total == 0)...)
	if c.s.total > 0 {
		res.Metrics = append(res.Metrics, scaleMetrics(c.reps, c.scale, c.marginal, c.s.total)...)
	}
	return res
}

// clientConns is how many connections the clients of scenario s open.
func (ss *session) clientConns(s scenario) int {
	if ss.cfg.conns == shared {
		return 1
	}
	return s.clients
}

// sampleProcess records the started server's RSS, threads and CPUs after
// a repetition: what it held to run the cell, beside what it spent.
// It returns the RSS read, for the connection-scale sample.
func (c *cell) sampleProcess() (rss float64, ok bool) {
	if c.ss.server == nil {
		return 0, false
	}
	sample, err := c.ss.server.Sample()
	if err != nil {
		return 0, false // the metrics are then left out: samples and reps no longer pair
	}
	c.process = append(c.process, sample)
	return sample.RSS, true
}

// serverAnonRSS is the anonymous part of the started server's resident
// set, if there is one.
func (ss *session) serverAnonRSS() (float64, bool) {
	if ss.server == nil {
		return 0, false
	}
	rss, err := ss.server.AnonRSS()
	return float64(rss), err == nil
}
