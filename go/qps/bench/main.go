// Command qpsbench measures gRPC's standard benchmark scenarios through
// gRPC's own protocol: qps workers (grpc-go's and clgrpc's) run the
// benchmark server and client, and //go/qps/driver runs each scenario
// against them. Every {server, client} pairing of the workers given is
// measured, the servers of one client in turns, repetition by repetition,
// on one machine with the server workers on one CPU set and the client
// workers (and this process) on another.
//
//	qpsbench -go_worker PATH -lisp_worker PATH -scenarios unary_ping_pong -payloads 0,1024 -duration 1s -reps 6
//
// Each cell reports the harness's metrics plus gRPC's qps per server core
// and each side's utilisation, and names its bottleneck: the client when
// the client was saturated, the server when it was, else neither. Only
// server-bound cells say anything about servers; the report judges no
// other.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/placement"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/go/bench/variant"
	"github.com/grpcbench/grpcbench/go/qps/driver"
	"github.com/grpcbench/grpcbench/go/qps/scenarios"

	// The suite's layout and goals, for the report this program prints.
	_ "github.com/grpcbench/grpcbench/go/qps/reportlayout"
)

const (
	suite = "qps"
	pkg   = "github.com/grpcbench/grpcbench/go/qps/bench"
)

type config struct {
	flags    harness.Flags
	workers  map[string]string // implementation -> worker binary
	servers  []string
	clients  []string
	shapes   []scenarios.Shape
	payloads []int
	duration time.Duration
	cpus     string
	place    placement.Placement // -cpus, resolved
	// quotas are the CPU caps the server workers are measured under, each
	// on workers started afresh in groups holding it: one uncapped point
	// unless -server_cpu_quota names caps.
	quotas    []cgroup.Quota
	orderSeed int64
}

func parseFlags(args []string, out io.Writer) (*config, error) {
	fs := flag.NewFlagSet("qpsbench", flag.ContinueOnError)
	fs.SetOutput(out)
	cfg := &config{flags: harness.Flags{Reps: 6}, workers: map[string]string{}}
	cfg.flags.Warmup.Duration = time.Second
	cfg.flags.Register(fs)
	var goWorker, lispWorker, servers, clients, scenarioList, payloads, quotas, periods string
	fs.StringVar(&goWorker, "go_worker", "", "`path` of grpc-go's qps worker (//go/qps:worker)")
	fs.StringVar(&lispWorker, "lisp_worker", "", "`path` of the Lisp qps worker (//lisp/qps:worker)")
	fs.StringVar(&servers, "servers", "go,lisp", "server workers, in the order of the report's columns: go, lisp")
	fs.StringVar(&clients, "clients", "go,lisp", "client workers: go, lisp")
	fs.StringVar(&scenarioList, "scenarios", "unary_ping_pong,streaming_ping_pong,unary_qps_unconstrained,streaming_qps_unconstrained",
		"gRPC's standard scenarios to run, comma-separated")
	fs.StringVar(&payloads, "payloads", "0,1024", "request and response payload `sizes` in octets, comma-separated")
	fs.DurationVar(&cfg.duration, "duration", time.Second, "measured time per repetition, in whole seconds (gRPC's scenarios count seconds)")
	fs.StringVar(&cfg.cpus, "cpus", placement.Auto, placement.Usage+"; the server workers take the server's CPUs, the client workers and this driver the load generator's")
	fs.StringVar(&quotas, "server_cpu_quota", "0", "comma `list` of CPU caps, in cores, the server workers are measured under by a CFS quota (a cgroup; needs root), 0 for none: with any cap the suite is "+quotaSuite+", each cap's cells on server workers started afresh in their groups")
	fs.StringVar(&periods, "server_cpu_period", cgroup.DefaultPeriod.String(), "comma `list` of CFS periods each -server_cpu_quota is measured at (the kernel's default is 100ms)")
	fs.Int64Var(&cfg.orderSeed, "order_seed", 0, "with several -server_cpu_quota points, the `seed` of their random order (0: from the clock; the seed used is recorded as order_seed)")
	if err := cfg.flags.Parse(fs, args); err != nil {
		return nil, err
	}
	fail := func(format string, a ...any) (*config, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintln(out, err)
		fs.Usage()
		return nil, err
	}
	paths := map[string]string{"go": goWorker, "lisp": lispWorker}
	var err error
	if cfg.servers, err = implementations(servers, paths); err != nil {
		return fail("-servers: %v", err)
	}
	if cfg.clients, err = implementations(clients, paths); err != nil {
		return fail("-clients: %v", err)
	}
	for _, impl := range append(append([]string{}, cfg.servers...), cfg.clients...) {
		cfg.workers[impl] = paths[impl]
	}
	if cfg.shapes, cfg.payloads, err = scenarios.ParseSelection(scenarioList, payloads); err != nil {
		return fail("%v", err)
	}
	if cfg.duration < time.Second || cfg.duration%time.Second != 0 {
		return fail("-duration %v: whole seconds, at least 1", cfg.duration)
	}
	if w := cfg.flags.Warmup; w.Ops > 0 || w.Duration%time.Second != 0 {
		return fail("-warmup %v: whole seconds (gRPC's scenarios warm up for a time, not a count)", w)
	}
	if cfg.quotas, err = parseQuotas(quotas, periods); err != nil {
		return fail("%v", err)
	}
	spec, err := placement.Parse(cfg.cpus)
	if err != nil {
		return fail("-cpus: %v", err)
	}
	cfg.place = spec.Resolve()
	return cfg, nil
}

func implementations(list string, paths map[string]string) ([]string, error) {
	var out []string
	for _, impl := range scenarios.SplitList(list) {
		path, known := paths[impl]
		switch {
		case !known:
			return nil, fmt.Errorf("%q is not go or lisp", impl)
		case path == "":
			return nil, fmt.Errorf("%s needs -%s_worker", impl, impl)
		}
		out = append(out, impl)
	}
	if len(out) == 0 {
		return nil, errors.New("none given")
	}
	return out, nil
}

// workerArgv is how each implementation's worker is told its driver port:
// the Lisp worker also keeps its benchmark servers on loopback.
func workerArgv(impl, path, port string) []string {
	if impl == "lisp" {
		return []string{path, "-driver_port", port, "-host", "127.0.0.1"}
	}
	return []string{path, "--driver_port=" + port}
}

// startWorker starts impl's worker on cpus; a server worker under a quota
// is born in control groups holding it.
func startWorker(impl, path string, cpus cpuset.Set, quota cgroup.Quota, log io.Writer) (*serverproc.Process, error) {
	return serverproc.StartListeningOn(serverproc.Spec{
		ReadyTimeout: time.Minute, StopGrace: 5 * time.Second, Log: log,
		Check: serverproc.CheckLoopback, CPUs: cpus,
		Cgroup: quota.Capped(), CgroupName: impl, CPUQuota: quota.Cores, CPUPeriod: quota.Period,
	}, func(port string) []string { return workerArgv(impl, path, port) })
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(harness.ExitOK)
		}
		os.Exit(harness.ExitUsage)
	}
	ctx, stop := harness.SignalContext()
	defer stop()
	os.Exit(run(ctx, cfg, os.Stdout, harness.SharedLog(os.Stderr)))
}

func run(ctx context.Context, cfg *config, stdout, log io.Writer) int {
	// This process drives the workers from the clients' CPUs, so that the
	// servers' CPUs run nothing but the server; pinned before the
	// environment is read, so that it records the GOMAXPROCS that follows.
	if err := cfg.place.PinSelf(); err != nil {
		fmt.Fprintf(log, "[%s] %v\n", suite, err)
	}
	name := suite
	if cfg.capped() {
		name = quotaSuite
	}
	file := &schema.File{Schema: schema.Version, Suite: name, Environment: cfg.flags.Environment()}
	extra := file.Environment.Extra
	// The servers of one client take turns a round at a time: the i-th
	// repetitions of a cell's servers ran back to back, and pair.
	extra[schema.ExtraRepsPaired] = schema.PairedByRound
	// The server workers, named in the setup's table with the digests of
	// their executables: the first unprefixed, the other as the rival.
	var workers []variant.Server
	for _, impl := range cfg.servers {
		workers = append(workers, variant.Server{Label: impl, Path: cfg.workers[impl]})
	}
	variant.Record(extra, workers)
	if cfg.capped() {
		extra[schema.ExtraServerCPUQuota] = cgroup.DescribeSweep(cfg.quotas)
		if len(cfg.quotas) > 1 {
			// The caps in a random order, so that no cap always runs at
			// the same moment of the run.
			extra[schema.ExtraOrderSeed] = strconv.FormatInt(harness.Shuffle(cfg.quotas, cfg.orderSeed), 10)
		}
	}
	clientCores := runtime.NumCPU()
	cfg.place.Record(extra)
	if cfg.place.Pinned() {
		clientCores = len(cfg.place.Client)
	}

	clients := map[string]*serverproc.Process{}
	for _, impl := range cfg.clients {
		p, err := startWorker(impl, cfg.workers[impl], cfg.place.Client, cgroup.Quota{}, log)
		if err != nil {
			fmt.Fprintf(log, "[%s] starting the %s client worker: %v\n", suite, impl, err)
			return harness.ExitFailed
		}
		defer stopWorker(p, impl+" client", log)
		clients[impl] = p
	}
	for i, quota := range cfg.quotas {
		file.Results = append(file.Results, measureAtQuota(ctx, cfg, quota, i, clients, clientCores, log)...)
	}
	return cfg.flags.Finish(stdout, log, file, pkg, "")
}

// stopWorker stops the worker named (such as "lisp server"), saying so if
// it had to be killed.
func stopWorker(p *serverproc.Process, name string, log io.Writer) {
	if err := p.Stop(); err != nil {
		fmt.Fprintf(log, "[%s] stopping the %s worker: %v\n", suite, name, err)
	}
}

// cells are the cells measured at quota, each on every server.
func (cfg *config) cells(quota cgroup.Quota) []cell {
	var out []cell
	for _, sh := range cfg.shapes {
		for _, payload := range cfg.payloads {
			for _, client := range cfg.clients {
				out = append(out, cell{shape: sh, payload: payload, client: client, quota: quota, sweep: cfg.capped()})
			}
		}
	}
	return out
}

// startOrder is the order the point-th point starts the server workers
// in: rotated from point to point, so that no server is always the one
// started last, whose start-up runs beside the other's first turn.
func (cfg *config) startOrder(point int) []string {
	n := len(cfg.servers)
	out := make([]string, n)
	for k := range out {
		out[k] = cfg.servers[(k+point)%n]
	}
	return out
}

// failedAt is the result of every cell at quota, each on every server,
// failed with err: a point that could not be measured.
func (cfg *config) failedAt(quota cgroup.Quota, err error) []schema.Result {
	var out []schema.Result
	for _, c := range cfg.cells(quota) {
		for _, server := range cfg.servers {
			out = append(out, c.result(server, nil, err, nil))
		}
	}
	return out
}

// measureAtQuota measures every cell on server workers started afresh
// under quota, so that each runs under it from its first instruction and
// no heap carries over from another cap, and stops them (in startOrder).
// Cells it could not measure (a worker that did not start, a cancelled
// run) fail with the reason.
func measureAtQuota(ctx context.Context, cfg *config, quota cgroup.Quota, point int, clients map[string]*serverproc.Process, clientCores int, log io.Writer) []schema.Result {
	serverProc := map[string]*serverproc.Process{}
	for _, impl := range cfg.startOrder(point) {
		if err := ctx.Err(); err != nil {
			return cfg.failedAt(quota, err)
		}
		p, err := startWorker(impl, cfg.workers[impl], cfg.place.Server, quota, log)
		if err != nil {
			err = fmt.Errorf("not run: starting the %s server worker: %w", impl, err)
			fmt.Fprintf(log, "[%s] %v\n", suite, err)
			return cfg.failedAt(quota, err)
		}
		defer stopWorker(p, impl+" server", log)
		serverProc[impl] = p
	}
	var results []schema.Result
	warmup := int(cfg.flags.Warmup.Duration / time.Second)
	measured := int(cfg.duration / time.Second)
	reps := cfg.flags.Reps
	for _, c := range cfg.cells(quota) {
		sc := c.shape.Scenario(c.payload, warmup, measured)
		ms := make([][]measurement, len(cfg.servers))
		errs := make([]error, len(cfg.servers))
		harness.InTurns(len(cfg.servers), reps, func(i, round int) {
			server := serverProc[cfg.servers[i]]
			if errs[i] != nil || ctx.Err() != nil {
				return
			}
			label := harness.TurnLabel(c.label(cfg.servers[i]), round, reps)
			fmt.Fprintf(log, "[%s] %s\n", suite, label)
			m, err := c.turn(ctx, sc, server, clients[c.client], clientCores, label, log)
			if err != nil {
				errs[i] = err
				return
			}
			ms[i] = append(ms[i], m)
		})
		for i, server := range cfg.servers {
			results = append(results, c.result(server, ms[i], errs[i], ctx.Err()))
		}
	}
	return results
}

// turn runs one repetition of the cell's scenario sc on server, with
// client, and measures it.
func (c cell) turn(ctx context.Context, sc *testpb.Scenario, server, client *serverproc.Process, clientCores int, label string, log io.Writer) (measurement, error) {
	// A worker that died fails the cell at once, naming which, rather than
	// after the driver's setup timeout.
	if err := server.ExitedEarly(); err != nil {
		return measurement{}, fmt.Errorf("%s: the server worker: %w", label, err)
	}
	if err := client.ExitedEarly(); err != nil {
		return measurement{}, fmt.Errorf("%s: the client worker: %w", label, err)
	}
	// The server's control groups, read at the driver's marks: over the
	// interval its statistics cover.
	var before, after cgroup.Reading
	g := server.Cgroup()
	onMeasure := func(begins bool) {
		switch {
		case g == nil:
		case begins:
			before = g.Read()
		default:
			after = g.Read()
		}
	}
	r, err := driver.Run(ctx, sc, driver.Options{
		Workers:      []string{server.Addr(), client.Addr()},
		SetupTimeout: 30 * time.Second,
		OnMeasure:    onMeasure,
	})
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", label, err)
	}
	m := measure(r, clientCores, c.quota)
	m.rep.SetServerThrottling(before, after)
	// What the server worker holds after the repetition: it serves every
	// scenario, so this includes what earlier ones grew it to.
	if m.sample, err = server.Sample(); err != nil {
		fmt.Fprintf(log, "[%s] %s: the server worker's RSS: %v\n", suite, label, err)
	}
	return m, nil
}

// cell is a scenario at one payload, client and CPU cap, measured on each
// server.
type cell struct {
	shape   scenarios.Shape
	payload int
	client  string
	quota   cgroup.Quota
	sweep   bool // the suite is quotaSuite: the cap is named
}

// label names the cell's measurement on server, in the progress log and
// the results.
func (c cell) label(server string) string {
	return fmt.Sprintf("%s/payload=%d/server=%s/client=%s%s", c.shape.Name, c.payload, server, c.client, c.quotaSuffix())
}

// quotaSuffix names the cell's cap in a quota suite.
func (c cell) quotaSuffix() string {
	switch {
	case !c.sweep:
		return ""
	case !c.quota.Capped():
		return "/cpu_quota=none"
	}
	return fmt.Sprintf("/cpu_quota=%g/cpu_period=%s", c.quota.Cores, c.quota.PeriodLabel())
}

func (c cell) result(server string, ms []measurement, err, cancelled error) schema.Result {
	sh := c.shape
	name := c.label(server)
	params := map[string]any{
		"scenario": sh.Name, "payload": c.payload, "server": server, "client": c.client,
		"rpc_type": sh.RPC.String(), "channels": int(sh.Channels), "outstanding": int(sh.Outstanding),
	}
	if c.sweep {
		params["server_cpu_quota"] = c.quota.Cores
		params["server_cpu_period"] = c.quota.PeriodLabel()
	}
	if err == nil && cancelled != nil {
		err = cancelled
	}
	reps := make([]harness.Rep, len(ms))
	for i, m := range ms {
		reps[i] = m.rep
	}
	res := harness.Result(name, params, reps, err)
	if len(ms) > 0 {
		res.Metrics = append(res.Metrics, extraMetrics(ms)...)
	}
	return res
}
