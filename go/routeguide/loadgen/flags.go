package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/grpcbench/grpcbench/go/bench/variant"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/placement"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
)

// Limits on the suite flags. They only reject values that are surely
// mistakes (a client count that would exhaust file descriptors, a stream
// that would take minutes per call), not unusual experiments.
const (
	maxClients    = 10_000
	maxStreamMsgs = 100_000
	minRate       = 0.01 // one call every 100 s
	maxRate       = 1e9  // one call a nanosecond: the schedule's resolution
)

// connMode says how the clients of a scenario reach the server.
type connMode string

const (
	// perClient gives each client its own ClientConn, hence its own TCP
	// connection and HTTP/2 session: clients contend only in the server.
	perClient connMode = "per-client"
	// shared multiplexes every client's calls as HTTP/2 streams over one
	// connection, which measures the transport's multiplexing instead.
	shared connMode = "shared"
)

// implPattern keeps -impl usable as the first segment of a scenario name
// ("go/unary/clients=10"), which must not contain whitespace or a slash.
var implPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// config is the parsed command line.
type config struct {
	bench harness.Flags // -out, -benchfmt, -reps, -warmup, -platform, ...

	serverPath string // -server, resolved; empty when -addr is used
	addr       string // -addr; empty when -server is used

	impl       string
	rpcs       []rpcKind
	clients    []int
	duration   time.Duration
	conns      connMode
	streamMsgs int
	cpus       string         // -cpus: auto, off or SERVER/CLIENT
	cpuSpec    placement.Spec // -cpus, parsed
	// rates, when given, make this an open loop, one scenario per rate
	// offered (a sweep: a latency-versus-load curve).
	rates []float64
	// totalConns, when given, makes this the connection-scale suite: each
	// scenario holds that many connections, the clients' plus idle ones.
	totalConns []int
	// serverArgs are extra arguments for the started server (-server_args).
	serverArgs []string
	// rival is a second server started beside the first (-rival), measured
	// in the same scenarios, repetition by repetition in turn.
	rival serverSpec
	// variants are further servers, each the -server's or the -rival's
	// binary with arguments of its own (-variant), measured in the same
	// turns.
	variants []serverSpec
	// lispClient is the Lisp load generator that makes the calls instead
	// of this process (-lisp_client); empty for the Go client.
	lispClient string
	// orderSeed shuffles the connection-scale cells (-order_seed); 0
	// takes one from the clock.
	orderSeed int64
	// tls, when on, makes every connection TLS (-tls and its files).
	tls transport
	// quotas are the CPU caps each started server is measured under
	// (-server_cpu_quota at each -server_cpu_period): one uncapped point
	// without them; with several, a sweep, each point on servers started
	// afresh.
	quotas []cgroup.Quota
}

// serverSpec is a server to start: its label in the results, executable
// and extra arguments, and whether it is a -variant.
type serverSpec struct {
	impl    string
	path    string
	args    []string
	variant bool
}

// capped reports whether any server is measured under a CPU quota.
func (cfg config) capped() bool {
	return slices.ContainsFunc(cfg.quotas, cgroup.Quota.Capped)
}

// sweep reports whether the run measures several CPU caps.
func (cfg config) sweep() bool { return len(cfg.quotas) > 1 }

// firstQuota is the cap the servers start under.
func (cfg config) firstQuota() cgroup.Quota {
	if len(cfg.quotas) == 0 {
		return cgroup.Quota{}
	}
	return cfg.quotas[0]
}

// servers are the servers to start, the -server first; none with -addr.
func (cfg config) servers() []serverSpec {
	if cfg.serverPath == "" {
		return nil
	}
	out := []serverSpec{{impl: cfg.impl, path: cfg.serverPath, args: cfg.serverArgs}}
	if cfg.rival.path != "" {
		out = append(out, cfg.rival)
	}
	return append(out, cfg.variants...)
}

// parseFlags parses args (args[0] is the program name). On a usage error it
// has printed the problem and the usage to stderr; -h gives flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	name := filepath.Base(args[0])
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s (-server PATH | -addr HOST:PORT) [flags]\n\n"+
			"Measures a RouteGuide server with unary, server-streaming, client-streaming\n"+
			"and bidi calls at several client counts, over loopback TCP. Progress goes to\n"+
			"stderr, a table to stdout, results to -out and -benchfmt.\n\nFlags:\n", name)
		fs.PrintDefaults()
	}

	// A 1s warm-up lets connections, pools and both peers' heaps settle
	// before the first measured repetition.
	cfg := config{bench: harness.Flags{Reps: 3, Warmup: harness.Warmup{Duration: time.Second}}}
	cfg.bench.Register(fs)
	var rpcs, clients, conns, totalConns, serverArgs, rivalArgs, rates, quotas, periods string
	fs.StringVar(&cfg.serverPath, "server", "", "RouteGuide server `executable` to start with -addr 127.0.0.1:0 (its CPU time is measured too)")
	fs.StringVar(&serverArgs, "server_args", "", "space-separated extra `arguments` for the -server started, such as a tuning flag; recorded in the results")
	fs.StringVar(&cfg.addr, "addr", "", "`host:port` of a running RouteGuide server on a loopback address, instead of -server")
	fs.StringVar(&cfg.impl, "impl", "go", "server implementation `label` recorded in the results (go, lisp)")
	fs.StringVar(&cfg.rival.path, "rival", "", "a second RouteGuide server `executable`, started beside -server and measured in the same scenarios, the two taking turns repetition by repetition so that both see the same machine (with -total_conns, each turn opens its connections and closes them after, so that one server at a time holds them)")
	fs.StringVar(&cfg.rival.impl, "rival_impl", "", "the -rival server's implementation `label`, other than -impl's")
	fs.StringVar(&rivalArgs, "rival_args", "", "space-separated extra `arguments` for the -rival server")
	var variants variant.Flag
	fs.Var(&variants, "variant", variant.Usage)
	fs.StringVar(&rpcs, "rpcs", defaultRPCs, "comma `list` of RPC kinds: unary, server_streaming, client_streaming, bidi")
	fs.StringVar(&clients, "clients", "1,10,100", "comma `list` of concurrent client counts, one scenario each")
	fs.DurationVar(&cfg.duration, "duration", 5*time.Second, "measured time per repetition")
	fs.StringVar(&conns, "conns", string(perClient), "connection `mode`: per-client (each client its own HTTP/2 connection) or shared (all clients multiplex one)")
	fs.StringVar(&totalConns, "total_conns", "", "comma `list` of total connection counts: each scenario adds idle HTTP/2 connections up to it, each cell on a freshly started server, and records the connections the server held, its RSS, its marginal RSS per connection and its CPU per request (the connscale suite)")
	fs.StringVar(&cfg.cpus, "cpus", placement.Auto, placement.Usage+"; with -addr, nothing is pinned")
	fs.StringVar(&rates, "rate", "", "an open loop: comma `list` of rates, requests/s offered in all, each a scenario (a sweep gives a latency-versus-load curve); requests start on a fixed schedule whether earlier ones have finished or not (up to 10,000 in flight), each latency measured from when it was due (no coordinated omission), the dispatcher's lateness recorded as send lag; a cell fails above 0.1% errors")
	fs.StringVar(&cfg.lispClient, "lisp_client", "", "make the calls with the Lisp RouteGuide client at this `executable` (//lisp/routeguide:loadgen), started on this load generator's CPUs, instead of with grpc-go in this process; this program still measures and computes every result, and names the scenarios .../client=lisp")
	fs.Int64Var(&cfg.orderSeed, "order_seed", 0, "with several -total_conns (or -server_cpu_quota points), the `seed` of the cells' (the caps') random order, so that no cell always inherits the heap of the same smaller one (0: from the clock; the seed used is recorded as order_seed)")
	fs.StringVar(&quotas, "server_cpu_quota", "0", "comma `list` of CPU caps, in cores, each started server is measured under by a CFS quota (a cgroup; needs root), 0 for none: one cap, so that this load generator on a whole core has headroom over the server, is the suite routeguide_capped, for throughput and CPU per request only (throttling distorts latency); several are a sweep (suite routeguide_quota), each cap's cells on servers started afresh in their groups")
	fs.StringVar(&periods, "server_cpu_period", cgroup.DefaultPeriod.String(), "comma `list` of CFS periods each -server_cpu_quota is measured at (the kernel's default is 100ms)")
	fs.IntVar(&cfg.streamMsgs, "stream_msgs", 10, "points per RecordRoute call and notes per RouteChat call (ListFeatures always streams the standard database's 100 features)")

	cfg.tls.register(fs)
	if err := cfg.bench.Parse(fs, args[1:]); err != nil {
		return config{}, err // Parse has printed the problem and the usage
	}
	cfg.serverArgs = strings.Fields(serverArgs)
	cfg.rival.args = strings.Fields(rivalArgs)
	if err := cfg.complete(rpcs, clients, conns, totalConns, rates, quotas, periods, variants); err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return config{}, err
	}
	return cfg, nil
}

// complete parses the list flags into cfg and checks every suite flag,
// reporting all problems at once.
func (cfg *config) complete(rpcs, clients, conns, totalConns, rates, quotas, periods string, variants []string) error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	switch {
	case (cfg.serverPath == "") == (cfg.addr == ""):
		fail("exactly one of -server and -addr is required")
	case cfg.serverPath == "" && len(cfg.serverArgs) > 0:
		fail("-server_args needs -server")
	case cfg.serverPath != "":
		// LookPath accepts a path with a slash as is and searches PATH
		// for a bare name; either way the file must be executable.
		path, err := exec.LookPath(cfg.serverPath)
		if err != nil {
			fail("-server: %v", err)
		}
		cfg.serverPath = path
	default:
		if err := serverproc.CheckLoopback(cfg.addr); err != nil {
			fail("-addr: %v", err)
		}
	}
	if cfg.lispClient != "" {
		path, err := exec.LookPath(cfg.lispClient)
		if err != nil {
			fail("-lisp_client: %v", err)
		}
		cfg.lispClient = path
	}
	if !implPattern.MatchString(cfg.impl) {
		fail("-impl %q: want letters, digits, '_', '.' or '-' (it starts each scenario name)", cfg.impl)
	}
	if cfg.rival.path != "" || cfg.rival.impl != "" || len(cfg.rival.args) > 0 {
		cfg.completeRival(fail)
	}
	cfg.completeVariants(variants, fail)
	var err error
	if cfg.rpcs, err = parseRPCKinds(rpcs); err != nil {
		fail("-rpcs: %v", err)
	}
	if cfg.clients, err = parseClientCounts(clients); err != nil {
		fail("-clients: %v", err)
	}
	if cfg.duration <= 0 {
		fail("-duration must be positive, got %v", cfg.duration)
	}
	switch connMode(conns) {
	case perClient, shared:
		cfg.conns = connMode(conns)
	default:
		fail("-conns %q: want per-client or shared", conns)
	}
	if totalConns != "" {
		if cfg.totalConns, err = parseClientCounts(totalConns); err != nil {
			fail("-total_conns: %v", err)
		}
		for _, t := range cfg.totalConns {
			for _, c := range cfg.clients {
				if t < c {
					fail("-total_conns %d is below -clients %d: the active clients' connections count too", t, c)
				}
			}
		}
		if cfg.conns != perClient {
			fail("-total_conns needs -conns per-client")
		}
	}
	if rates != "" {
		for _, f := range strings.Split(rates, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			switch {
			case err != nil:
				fail("-rate %q: not a number", f)
			case r < minRate || r > maxRate:
				fail("-rate must be from %g to %g calls/s, got %g", minRate, maxRate, r)
			case slices.Contains(cfg.rates, r):
				fail("-rate %g given twice", r)
			default:
				cfg.rates = append(cfg.rates, r)
			}
		}
	}
	if rates != "" && totalConns != "" {
		fail("-rate and -total_conns are separate suites; give one")
	}
	if cfg.cpuSpec, err = placement.Parse(cfg.cpus); err != nil {
		fail("-cpus: %v", err)
	}
	if cfg.streamMsgs < 1 || cfg.streamMsgs > maxStreamMsgs {
		fail("-stream_msgs must be from 1 to %d, got %d", maxStreamMsgs, cfg.streamMsgs)
	}
	cfg.quotas, err = parseQuotaPoints(quotas, periods)
	switch {
	case err != nil:
		fail("%v", err)
	case !cfg.capped():
	case cfg.serverPath == "":
		fail("-server_cpu_quota needs -server: it caps a server this program starts")
	case len(cfg.rates) > 0 || len(cfg.totalConns) > 0:
		fail("-server_cpu_quota is for the closed-loop grid: throttling distorts the latency that -rate and -total_conns judge")
	case cfg.conns == shared:
		fail("-server_cpu_quota and -conns shared are separate suites; give one")
	}
	if err := cfg.tls.complete(cfg.serverPath != "", cfg.lispClient != ""); err != nil {
		fail("%v", err)
	}
	return errors.Join(errs...)
}

// completeRival checks the -rival flags: a second server to start, under a
// label of its own.
func (cfg *config) completeRival(fail func(string, ...any)) {
	switch {
	case cfg.rival.path == "":
		fail("-rival_impl and -rival_args need -rival")
		return
	case cfg.serverPath == "":
		fail("-rival needs -server")
	}
	path, err := exec.LookPath(cfg.rival.path)
	if err != nil {
		fail("-rival: %v", err)
	}
	cfg.rival.path = path
	switch {
	case !implPattern.MatchString(cfg.rival.impl):
		fail("-rival_impl %q: want letters, digits, '_', '.' or '-'", cfg.rival.impl)
	case cfg.rival.impl == cfg.impl:
		fail("-rival_impl %q is -impl's too: each server needs a label of its own", cfg.rival.impl)
	}
}

// parseClientCounts parses a -clients value: distinct counts from 1 to
// maxClients, run in the order given.
func parseClientCounts(s string) ([]int, error) {
	items, err := splitList(s)
	if err != nil {
		return nil, err
	}
	var counts []int
	seen := map[int]bool{}
	for _, item := range items {
		n, err := strconv.Atoi(item)
		if err != nil || n < 1 || n > maxClients {
			return nil, fmt.Errorf("%q is not a client count from 1 to %d", item, maxClients)
		}
		if seen[n] {
			return nil, fmt.Errorf("client count %d given twice", n)
		}
		seen[n] = true
		counts = append(counts, n)
	}
	return counts, nil
}
