// Command tournament compares in-process gRPC channels on the Echo service
// (proto/echo): this repository's go/inprocgrpc ("ours", unary handlers on
// the caller's goroutine, and "ours-detached", each on a goroutine of its
// own as grpchan does), fullstorydev grpchan's inprocgrpc, and real gRPC
// over loopback TCP; and, on the unary payload sweep only, both channels
// with the opt-in contract of sharing unary messages instead of copying
// them ("ours-shared", "ours-detached-shared", "grpchan-shared"), on the
// scenarios of the prior tournament (docs/prior-results.md):
// unary at 32 B to 1 MiB, server streaming of 100 x 32 B, bidi echo,
// concurrent unary at 10, 50 and 100 goroutines, and latency percentiles of
// 10 goroutines x 5000 calls.
//
// Every scenario runs on the shared harness (go/bench/harness), the
// competitors of a workload taking turns repetition by repetition (see
// race), and the results print as the report's tournament tables, with
// ns/op relative to grpchan. The defaults keep a full run to about a minute
// on two cores.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/placement"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	pb "github.com/grpcbench/grpcbench/proto/echo"

	// The suite's layout and goals, for the report this program prints.
	_ "github.com/grpcbench/grpcbench/go/inprocgrpc/tournament/reportlayout"
)

const (
	suite = "tournament"
	pkg   = "github.com/grpcbench/grpcbench/go/inprocgrpc/tournament"
)

// Exit codes are the harness's: ExitFailed when a scenario failed or the
// results could not be written, ExitUsage on a usage error.
func main() {
	ctx, stop := harness.SignalContext()
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	var usage usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "tournament:", err)
		os.Exit(harness.ExitUsage)
	default:
		fmt.Fprintln(os.Stderr, "tournament:", err)
		os.Exit(harness.ExitFailed)
	}
}

// usageError is a bad command line, as opposed to a failed run.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// config is the suite's own flags, next to the harness's shared ones.
type config struct {
	scenarios    *regexp.Regexp
	duration     time.Duration
	ops          int64
	latencyCalls int64
}

func parseFlags(args []string, stderr io.Writer) (*harness.Flags, *config, error) {
	flags := &harness.Flags{Reps: 3, Warmup: harness.Warmup{Duration: 100 * time.Millisecond}}
	fs := flag.NewFlagSet(suite, flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags.Register(fs)
	filter := fs.String("scenarios", "", "run only the scenarios whose name matches this `regexp`, e.g. '^unary/' or 'bidi|latency' or '/ours$'")
	cfg := &config{}
	fs.DurationVar(&cfg.duration, "duration", 400*time.Millisecond, "measured time per repetition of a throughput scenario")
	fs.Int64Var(&cfg.ops, "n", 0, "if positive, a fixed operation count per repetition of a throughput scenario, instead of -duration")
	fs.Int64Var(&cfg.latencyCalls, "latency_calls", 5000, "calls per goroutine in each repetition of the latency scenario")
	if err := flags.Parse(fs, args); err != nil {
		return nil, nil, err
	}
	re, err := regexp.Compile(*filter)
	if err != nil {
		return nil, nil, fmt.Errorf("-scenarios: %w", err)
	}
	cfg.scenarios = re
	if cfg.duration <= 0 && cfg.ops <= 0 {
		return nil, nil, errors.New("one of -duration and -n must be positive")
	}
	if cfg.latencyCalls < 1 {
		return nil, nil, errors.New("-latency_calls must be at least 1")
	}
	return flags, cfg, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags, cfg, err := parseFlags(args, stderr)
	if err != nil {
		return usageError{err}
	}
	file := schema.NewFile(suite, flags.Environment())
	placement.InProcess().Record(file.Environment.Extra)
	// race measures every workload's entrants a repetition each per round.
	file.Environment.Extra[schema.ExtraRepsPaired] = schema.PairedByRound
	// The channels and servers measured are this binary's own code: a
	// document that shows the figures is stale once it changes.
	file.Environment.Extra[schema.ExtraServer] = "in-process channels, in the measuring binary"
	file.Environment.Extra[schema.ExtraServerSHA256] = file.Environment.Extra[schema.ExtraBinarySHA256]
	clients := map[string]*started{}
	defer func() {
		for _, s := range clients {
			s.stop()
		}
	}()
	for _, w := range workloads() {
		var entrants []*entrant
		for _, c := range competitors {
			if !c.enters(w) || !cfg.scenarios.MatchString(w.scenario(c.name)) {
				continue
			}
			s := clients[c.name]
			if s == nil {
				s = start(c)
				clients[c.name] = s
			}
			entrants = append(entrants, newEntrant(w, c.name, s))
		}
		results, err := race(ctx, flags, cfg, w, entrants, stderr)
		file.Results = append(file.Results, results...)
		if err != nil {
			return err
		}
	}
	if len(file.Results) == 0 {
		return usageError{fmt.Errorf("no scenario matches -scenarios %q", cfg.scenarios)}
	}
	if flags.Finish(stdout, stderr, file, pkg, "") != harness.ExitOK {
		return errors.New("the results could not be written, or a scenario failed")
	}
	return nil
}

// started is a competitor's client, or why it could not start.
type started struct {
	client pb.EchoClient
	stop   func()
	err    error
}

func start(c competitor) *started {
	cli, stop, err := c.start()
	if err != nil {
		return &started{err: err, stop: func() {}}
	}
	return &started{client: cli, stop: stop}
}

// entrant is one competitor's scenario of a workload, collecting its
// repetitions.
type entrant struct {
	name, competitor string
	params           map[string]any
	op               opFactory
	reps             []harness.Rep
	err              error
}

func newEntrant(w *workload, competitor string, s *started) *entrant {
	e := &entrant{name: w.scenario(competitor), competitor: competitor, params: w.params(competitor), err: s.err}
	if s.err == nil {
		e.op = w.op(s.client, w)
	}
	return e
}

// race measures a workload's entrants one repetition at a time, in turns
// (harness.InTurns). Each entrant warms up once, before its first
// repetition.
func race(ctx context.Context, flags *harness.Flags, cfg *config, w *workload, entrants []*entrant, progress io.Writer) ([]schema.Result, error) {
	plan := harness.Plan{Workers: w.workers(), Reps: 1}
	switch {
	case w.latency:
		plan.Ops = cfg.latencyCalls * int64(plan.Workers)
	case cfg.ops > 0:
		plan.Ops = cfg.ops
	default:
		plan.Duration = cfg.duration
	}
	for _, e := range entrants {
		switch {
		case w.latency:
			e.params["calls"] = plan.Ops
		case cfg.ops > 0:
			e.params["ops"] = cfg.ops
		default:
			e.params["duration"] = cfg.duration.String()
		}
	}
	harness.InTurns(len(entrants), flags.Reps, func(i, round int) {
		e := entrants[i]
		if e.err != nil {
			return
		}
		p := plan
		if round == 0 {
			p.Warmup = flags.Warmup
		}
		r := &harness.Runner{Suite: suite, Scenario: harness.TurnLabel(e.name, round, flags.Reps), Plan: p, Progress: progress}
		reps, err := r.Run(ctx, e.op.op)
		e.reps = append(e.reps, reps...)
		e.err = err
	})
	var results []schema.Result
	for _, e := range entrants {
		if e.op.close != nil {
			e.op.close()
		}
		if e.reps == nil && e.err != nil {
			results = append(results, harness.ErrorResult(e.name, e.params, e.err))
			continue
		}
		results = append(results, harness.Result(e.name, e.params, e.reps, e.err))
	}
	return results, ctx.Err()
}
