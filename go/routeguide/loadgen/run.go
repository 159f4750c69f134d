package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
)

// importPath names the benchmark in Go benchmark format output.
const importPath = "github.com/grpcbench/grpcbench/go/routeguide/loadgen"

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

	stderr = harness.SharedLog(stderr)
	file := measure(ctx, cfg, stderr)
	return cfg.bench.Finish(stdout, stderr, file, importPath, "### Scenarios\n\n"+summaryTable(file.Results).Markdown())
}

// measure runs every scenario, against the server it starts (-server) or
// the given one (-addr), and returns the results, one per scenario whether
// it succeeded or not.
func measure(ctx context.Context, cfg config, log io.Writer) *schema.File {
	// Pinned first, so that the environment records the GOMAXPROCS the
	// measurement runs with.
	place := cfg.place()
	place.pinSelf(log)
	env := cfg.bench.Environment()
	env.Extra[schema.ExtraServer] = "external, at -addr"
	if cfg.serverPath != "" {
		env.Extra[schema.ExtraServer] = cfg.impl + " server " + filepath.Base(cfg.serverPath)
		env.Extra[schema.ExtraServerSHA256] = schema.FileSHA256(cfg.serverPath)
		env.Extra[schema.ExtraServerRuntime] = serverRuntime()
		if len(cfg.serverArgs) > 0 {
			env.Extra[schema.ExtraServerArgs] = strings.Join(cfg.serverArgs, " ")
		}
	}
	place.record(env.Extra)
	name := suite
	switch {
	case len(cfg.totalConns) > 0:
		name = connScaleSuite
	case cfg.rate > 0:
		name = openLoopSuite
	}
	file := schema.NewFile(name, env)
	scenarios := cfg.scenarios()
	ss := &session{cfg: cfg, addr: cfg.addr, progress: log, stallGrace: stallGrace}
	// fail records every scenario as failed, so that the report shows
	// why the run measured nothing.
	fail := func(err error) *schema.File {
		for _, s := range scenarios {
			var params map[string]any
			if ss.work != nil {
				params = ss.params(s)
			}
			file.Results = append(file.Results, harness.ErrorResult(s.name(cfg.impl), params, err))
		}
		return file
	}

	var err error
	if ss.work, err = newWorkload(cfg.streamMsgs, newChatSpots()); err != nil {
		return fail(err)
	}
	if cfg.serverPath != "" {
		srv, err := serverproc.Start(ctx, serverproc.Spec{
			Argv:         append([]string{cfg.serverPath, "-addr", "127.0.0.1:0"}, cfg.serverArgs...),
			ReadyTimeout: serverReadyTimeout,
			StopGrace:    serverStopGrace,
			Log:          log,
			Check:        serverproc.CheckLoopback,
			CPUs:         place.server,
		})
		if err != nil {
			return fail(fmt.Errorf("starting %s: %w", cfg.serverPath, err))
		}
		// Deferred as well as called below, so that no path, a panic
		// included, leaves the server running.
		defer srv.Stop()
		fmt.Fprintf(log, "[%s] server %s (pid %d) listening on %s\n", suite, cfg.serverPath, srv.PID(), srv.Addr())
		ss.server, ss.addr, ss.cpu = srv, srv.Addr(), harness.NewProcessCPU(srv.PID())
	}

	for _, s := range scenarios {
		file.Results = append(file.Results, ss.run(ctx, s))
	}

	if ss.server != nil {
		if err := ss.server.Stop(); err != nil {
			fmt.Fprintf(log, "[%s] %v\n", suite, err)
		}
	}
	return file
}
