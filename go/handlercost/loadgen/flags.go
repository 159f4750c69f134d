package main

import (
	"regexp"

	"errors"
	"flag"
	"fmt"
	"github.com/grpcbench/grpcbench/go/bench/variant"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/placement"
	"github.com/grpcbench/grpcbench/go/handlercost/wire"
)

// Bounds on the suite's flags: they reject only values that are surely
// mistakes.
const (
	// As many as clgrpc lets one connection carry at once by default
	// (SETTINGS_MAX_CONCURRENT_STREAMS 1,000; grpc-go sets no limit): more
	// callers on one connection would queue in the client for the Lisp
	// server only.
	maxCallers = 1000
	maxConns   = 64
	maxPolls   = 1000
)

// labelPattern is what a server's label may be: it starts each scenario
// name and names its cgroup.
var labelPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// defaultKinds are the handlers of the grid: at once, 200 µs of CPU, 2 ms
// and 100 ms of waiting. The last has 1,000 callers, so that the server
// holds that many blocked calls at once: with a few hundred, both servers
// answer as fast as the callers ask (N calls per 100 ms) and calls/s cannot
// tell them apart, while at 1,000 each server's cost per blocked call (a
// thread woken, a goroutine resumed) sets how far short of it they fall.
const defaultKinds = "fast,spin:200us,sleep:2ms,sleep:100ms@1000"

// serverSpec is a server to start: its label in the results, executable
// and arguments (a -variant's), as go/bench/variant names it.
type serverSpec = variant.Server

// config is the parsed command line.
type config struct {
	bench   harness.Flags // -out, -benchfmt, -reps, -warmup, ...
	servers []serverSpec  // -server, then -rival if given, then each -variant
	// variantHandlers are the cells' handlers the variants are measured
	// on (-variant_handlers; nil: every cell).
	variantHandlers map[string]bool
	cpuSpec         placement.Spec
	kinds           []handlerKind
	conns           []int
	callers         int
	duration        time.Duration
	// The long-poll mix: polls Sleep calls of poll each held open over
	// the connections, pollCallers callers of Fast measured beside them.
	polls       int
	poll        time.Duration
	pollCallers int
}

// parseFlags parses args (args[0] is the program name). On a usage error it
// has printed the problem and the usage to stderr; -h gives flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	name := filepath.Base(args[0])
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s -server PATH [-rival PATH] [flags]\n\n"+
			"Measures handler-cost servers (Fast, Sleep, Spin) with grpc-go callers over\n"+
			"loopback TCP, the servers in turns. Progress goes to stderr, the report to\n"+
			"stdout, results to -out and -benchfmt.\n\nFlags:\n", name)
		fs.PrintDefaults()
	}
	cfg := config{bench: harness.Flags{Reps: 3, Warmup: harness.Warmup{Duration: 500 * time.Millisecond}}}
	cfg.bench.Register(fs)
	first, rival := serverSpec{Label: "go"}, serverSpec{Label: "lisp"}
	var cpus, kinds, conns string
	var variants variant.Flag
	var variantHandlers string
	fs.StringVar(&first.Path, "server", "", "handler-cost server `executable`, started with -addr 127.0.0.1:0 (its CPU time is measured too)")
	fs.StringVar(&first.Label, "impl", first.Label, "the -server's `label` in the results")
	fs.StringVar(&rival.Path, "rival", "", "a second server `executable`, measured in the same cells, the two taking turns repetition by repetition")
	fs.StringVar(&rival.Label, "rival_impl", rival.Label, "the -rival's `label` in the results")
	fs.Var(&variants, "variant", variant.Usage)
	fs.StringVar(&variantHandlers, "variant_handlers", "", "comma `list` of the cells' handlers (fast, spin_200us, ..., longpoll) the -variant servers are measured on; empty: every cell")
	fs.StringVar(&cpus, "cpus", placement.Auto, placement.Usage)
	fs.StringVar(&kinds, "kinds", defaultKinds, "comma `list` of handlers: fast, spin:DURATION (CPU-bound), sleep:DURATION (waiting), each optionally @CALLERS (default -callers)")
	fs.StringVar(&conns, "conns", "4,1", "comma `list` of connection counts the callers are spread over, one cell each")
	fs.IntVar(&cfg.callers, "callers", 64, "concurrent callers of a cell, each calling in a loop")
	fs.DurationVar(&cfg.duration, "duration", time.Second, "measured time per repetition")
	fs.IntVar(&cfg.polls, "polls", 40, "the long-poll mix: Sleep calls held open over the connections while Fast calls are measured (0: no such cell)")
	fs.DurationVar(&cfg.poll, "poll", 20*time.Second, "how long each long poll sleeps on the server; a poll that ends is made again until the cell ends")
	fs.IntVar(&cfg.pollCallers, "poll_callers", 4, "callers of Fast measured beside the long polls")
	if err := cfg.bench.Parse(fs, args[1:]); err != nil {
		return config{}, err // Parse has printed the problem and the usage
	}
	if err := cfg.complete(first, rival, variants, cpus, kinds, conns, variantHandlers); err != nil {
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return config{}, err
	}
	return cfg, nil
}

// complete parses the list flags into cfg and checks every suite flag,
// reporting all problems at once.
func (cfg *config) complete(first, rival serverSpec, variants []string, cpus, kinds, conns, variantHandlers string) error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for _, s := range []serverSpec{first, rival} {
		if s.Path == "" {
			continue
		}
		path, err := exec.LookPath(s.Path)
		if err != nil {
			fail("%s server: %v", s.Label, err)
		}
		cfg.servers = append(cfg.servers, serverSpec{Label: s.Label, Path: path})
	}
	switch {
	case first.Path == "":
		fail("-server is required")
	case rival.Path != "" && rival.Label == first.Label:
		fail("-rival_impl %q is -impl's too: each server needs a label of its own", rival.Label)
	}
	resolved, verrs := variant.Resolve(variants, cfg.servers, labelPattern.MatchString)
	errs = append(errs, verrs...)
	cfg.servers = append(cfg.servers, resolved...)
	var err error
	if cfg.cpuSpec, err = placement.Parse(cpus); err != nil {
		fail("-cpus: %v", err)
	}
	if cfg.kinds, err = parseKinds(kinds); err != nil {
		fail("-kinds: %v", err)
	}
	if cfg.conns, err = parseConns(conns); err != nil {
		fail("-conns: %v", err)
	}
	if variantHandlers != "" {
		cfg.variantHandlers = map[string]bool{}
		known := map[string]bool{longPollHandler: true}
		for _, k := range cfg.kinds {
			known[k.name()] = true
		}
		for _, h := range strings.Split(variantHandlers, ",") {
			h = strings.TrimSpace(h)
			if !known[h] {
				fail("-variant_handlers: %q is no cell's handler (-kinds names them, and longpoll)", h)
			}
			cfg.variantHandlers[h] = true
		}
	}
	if cfg.callers < 1 || cfg.callers > maxCallers {
		fail("-callers must be from 1 to %d, got %d", maxCallers, cfg.callers)
	}
	if cfg.duration <= 0 {
		fail("-duration must be positive, got %v", cfg.duration)
	}
	if cfg.polls < 0 || cfg.polls > maxPolls {
		fail("-polls must be from 0 to %d, got %d", maxPolls, cfg.polls)
	}
	if cfg.poll < time.Millisecond || cfg.poll > wire.MaxMicros*time.Microsecond {
		fail("-poll must be from 1ms to %v, got %v", wire.MaxMicros*time.Microsecond, cfg.poll)
	}
	if cfg.pollCallers < 1 || cfg.pollCallers > maxCallers {
		fail("-poll_callers must be from 1 to %d, got %d", maxCallers, cfg.pollCallers)
	}
	return errors.Join(errs...)
}

// parseConns parses -conns: distinct counts from 1 to maxConns.
func parseConns(s string) ([]int, error) {
	var out []int
	for _, item := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(item))
		if err != nil || n < 1 || n > maxConns {
			return nil, fmt.Errorf("%q is not a connection count from 1 to %d", item, maxConns)
		}
		for _, m := range out {
			if m == n {
				return nil, fmt.Errorf("%d given twice", n)
			}
		}
		out = append(out, n)
	}
	return out, nil
}
