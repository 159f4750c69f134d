package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/grpcbench/grpcbench/go/bench/variant"
	"io"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/placement"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// The suites of the results, each with a layout of its own in the report:
// suite with each server on CPUs of its own (-cpus auto on two CPUs or
// more, or an explicit SERVER/CLIENT pair), sharedCPUsSuite with the
// servers and the load generator on the same CPUs (-cpus off, one usable
// CPU, or a pin that failed), where a server may use more CPUs than
// pinned, but not without the load generator beside it. Progress lines
// name suite.
const (
	suite           = "handlercost"
	sharedCPUsSuite = "handlercost_shared_cpus"
)

// resultsSuite is the suite of results measured with the servers and the
// load generator where p put them.
func resultsSuite(p placement.Placement) string {
	if p.Pinned() {
		return suite
	}
	return sharedCPUsSuite
}

// importPath names the benchmark in Go benchmark format output.
const importPath = "github.com/grpcbench/grpcbench/go/handlercost/loadgen"

// run is the whole program minus signal wiring: args[0] is the program name,
// and the return value is the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return harness.ExitOK
	}
	if err != nil {
		return harness.ExitUsage
	}
	log := harness.SharedLog(stderr)
	return cfg.bench.Finish(stdout, log, measure(ctx, cfg, log), importPath, "")
}

// measure starts the servers, measures every cell against them and returns
// the results, one per cell and server whether it succeeded or not.
func measure(ctx context.Context, cfg config, log io.Writer) *schema.File {
	// Pinned first, so that the environment records the GOMAXPROCS the
	// measurement runs with.
	place := cfg.cpuSpec.Resolve()
	if err := place.PinSelf(); err != nil {
		fmt.Fprintf(log, "[%s] %v\n", suite, err)
	}
	env := cfg.bench.Environment()
	place.Record(env.Extra)
	env.Extra[schema.ExtraClient] = "go"
	variant.Record(env.Extra, cfg.servers)
	if len(cfg.servers) > 1 {
		// Each cell's servers take turns, a repetition each per round.
		env.Extra[schema.ExtraRepsPaired] = schema.PairedByRound
	}
	file := schema.NewFile(resultsSuite(place), env)

	var servers []*server
	defer func() {
		for _, s := range servers {
			s.stop(log)
		}
	}()
	var err error
	for _, spec := range cfg.servers {
		var s *server
		if s, err = startServer(ctx, spec, place.Server, log); err != nil {
			break
		}
		servers = append(servers, s)
		env.Extra[schema.ExtraServerCPUClock] = s.cpu.CPUClock()
	}
	for _, s := range cfg.scenarios() {
		if err != nil {
			// Every cell is recorded as failed, so that the report says
			// why the run measured nothing.
			for _, spec := range cfg.servers {
				if cfg.measures(spec, s) {
					file.Results = append(file.Results, harness.ErrorResult(s.name(spec.Label), s.params(spec.Label, cfg), err))
				}
			}
			continue
		}
		file.Results = append(file.Results, measureScenario(ctx, cfg, servers, s, log)...)
	}
	return file
}
