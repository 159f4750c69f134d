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
	"time"

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
}

func parseFlags(args []string, out io.Writer) (*config, error) {
	fs := flag.NewFlagSet("qpsbench", flag.ContinueOnError)
	fs.SetOutput(out)
	cfg := &config{flags: harness.Flags{Reps: 6}, workers: map[string]string{}}
	cfg.flags.Warmup.Duration = time.Second
	cfg.flags.Register(fs)
	var goWorker, lispWorker, servers, clients, scenarioList, payloads string
	fs.StringVar(&goWorker, "go_worker", "", "`path` of grpc-go's qps worker (//go/qps:worker)")
	fs.StringVar(&lispWorker, "lisp_worker", "", "`path` of the Lisp qps worker (//lisp/qps:worker)")
	fs.StringVar(&servers, "servers", "go,lisp", "server workers, in the order of the report's columns: go, lisp")
	fs.StringVar(&clients, "clients", "go,lisp", "client workers: go, lisp")
	fs.StringVar(&scenarioList, "scenarios", "unary_ping_pong,streaming_ping_pong,unary_qps_unconstrained,streaming_qps_unconstrained",
		"gRPC's standard scenarios to run, comma-separated")
	fs.StringVar(&payloads, "payloads", "0,1024", "request and response payload `sizes` in octets, comma-separated")
	fs.DurationVar(&cfg.duration, "duration", time.Second, "measured time per repetition, in whole seconds (gRPC's scenarios count seconds)")
	fs.StringVar(&cfg.cpus, "cpus", placement.Auto, placement.Usage+"; the server workers take the server's CPUs, the client workers and this driver the load generator's")
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

func startWorker(impl, path string, cpus cpuset.Set, log io.Writer) (*serverproc.Process, error) {
	return serverproc.StartListeningOn(serverproc.Spec{
		ReadyTimeout: time.Minute, StopGrace: 5 * time.Second, Log: log,
		Check: serverproc.CheckLoopback, CPUs: cpus,
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
	file := &schema.File{Schema: schema.Version, Suite: suite, Environment: cfg.flags.Environment()}
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
	clientCores := runtime.NumCPU()
	cfg.place.Record(extra)
	if cfg.place.Pinned() {
		clientCores = len(cfg.place.Client)
	}

	serverAddr, clientAddr := map[string]string{}, map[string]string{}
	serverProc := map[string]*serverproc.Process{}
	for role, impls := range map[string][]string{"server": cfg.servers, "client": cfg.clients} {
		cpus, addrs := cfg.place.Server, serverAddr
		if role == "client" {
			cpus, addrs = cfg.place.Client, clientAddr
		}
		for _, impl := range impls {
			p, err := startWorker(impl, cfg.workers[impl], cpus, log)
			if err != nil {
				fmt.Fprintf(log, "[%s] starting the %s %s worker: %v\n", suite, impl, role, err)
				return harness.ExitFailed
			}
			defer p.Stop()
			addrs[impl] = p.Addr()
			if role == "server" {
				serverProc[impl] = p
			}
		}
	}

	warmup := int(cfg.flags.Warmup.Duration / time.Second)
	measured := int(cfg.duration / time.Second)
	reps := cfg.flags.Reps
	for _, sh := range cfg.shapes {
		for _, payload := range cfg.payloads {
			for _, client := range cfg.clients {
				sc := sh.Scenario(payload, warmup, measured)
				ms := make([][]measurement, len(cfg.servers))
				errs := make([]error, len(cfg.servers))
				harness.InTurns(len(cfg.servers), reps, func(i, round int) {
					server := cfg.servers[i]
					if errs[i] != nil || ctx.Err() != nil {
						return
					}
					label := harness.TurnLabel(fmt.Sprintf("%s/server=%s/client=%s", sc.Name, server, client), round, reps)
					fmt.Fprintf(log, "[%s] %s\n", suite, label)
					r, err := driver.Run(ctx, sc, driver.Options{
						Workers: []string{serverAddr[server], clientAddr[client]}, SetupTimeout: 30 * time.Second,
					})
					if err != nil {
						errs[i] = fmt.Errorf("%s: %w", label, err)
						return
					}
					m := measure(r, clientCores)
					// What the server worker holds after the repetition: it
					// serves every scenario, so this includes what earlier
					// ones grew it to.
					if m.sample, err = serverProc[server].Sample(); err != nil {
						fmt.Fprintf(log, "[%s] %s: the server worker's RSS: %v\n", suite, label, err)
					}
					ms[i] = append(ms[i], m)
				})
				for i, server := range cfg.servers {
					file.Results = append(file.Results, cellResult(sh, payload, server, client, ms[i], errs[i], ctx.Err()))
				}
			}
		}
	}
	return cfg.flags.Finish(stdout, log, file, pkg, "")
}

func cellResult(sh scenarios.Shape, payload int, server, client string, ms []measurement, err, cancelled error) schema.Result {
	name := fmt.Sprintf("%s/payload=%d/server=%s/client=%s", sh.Name, payload, server, client)
	params := map[string]any{
		"scenario": sh.Name, "payload": payload, "server": server, "client": client,
		"rpc_type": sh.RPC.String(), "channels": int(sh.Channels), "outstanding": int(sh.Outstanding),
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
