package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/go/bench/variant"
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

// measure runs every scenario, against the servers it starts (-server,
// and -rival beside it) or the given one (-addr), and returns the results,
// one per scenario and server whether it succeeded or not.
func measure(ctx context.Context, cfg config, log io.Writer) *schema.File {
	// Pinned first, so that the environment records the GOMAXPROCS the
	// measurement runs with.
	place := cfg.place()
	pinSelf(&place, log)
	env := cfg.bench.Environment()
	env.Extra[schema.ExtraServer] = "external, at -addr"
	variant.Record(env.Extra, cfg.variantServers())
	if len(cfg.servers()) > 1 {
		// Each scenario's servers take turns (interleave), a repetition each per round.
		env.Extra[schema.ExtraRepsPaired] = schema.PairedByRound
	}
	if cfg.serverPath != "" {
		env.Extra[schema.ExtraServerRuntime] = serverRuntime()
	}
	// The Lisp client, if it makes the calls, on the load generator's CPUs.
	var lisp *lispClient
	var err error
	if cfg.lispClient != "" {
		env.Extra[schema.ExtraClient] = "lisp"
		env.Extra[schema.ExtraClientSHA256] = schema.FileSHA256(cfg.lispClient)
		lisp, env.SBCLVersion, err = startLispClient(ctx, cfg.lispClient, place.Client, log)
		if err == nil {
			defer func() {
				if err := lisp.stop(); err != nil {
					fmt.Fprintf(log, "[%s] %v\n", suite, err)
				}
			}()
		}
	}

	place.Record(env.Extra)
	name := suite
	switch {
	case len(cfg.totalConns) > 0:
		name = connScaleSuite
	case len(cfg.rates) > 0:
		name = openLoopSuite
	}
	switch {
	case cfg.sweep():
		// The caps side by side: a suite of its own.
		name = quotaSweepSuite
		env.Extra[schema.ExtraServerCPUQuota] = cgroup.DescribeSweep(cfg.quotas)
	case cfg.capped():
		// A suite of its own, judged on throughput and CPU per request only.
		name = cappedSuite
		env.Extra[schema.ExtraServerCPUQuota] = cgroup.DescribeSweep(cfg.quotas)
	case cfg.conns == shared && name == suite:
		name = sharedConnSuite
	}
	if cfg.tls.on {
		// A suite of its own: its cells would otherwise collide with the
		// plaintext ones of the same server, RPC and clients in a report.
		name += "_tls"
	}
	if cfg.sweep() {
		// The caps in a random order, so that no cap always runs at the
		// same moment of the run (its start, a warm machine, its end).
		env.Extra[schema.ExtraOrderSeed] = strconv.FormatInt(harness.Shuffle(cfg.quotas, cfg.orderSeed), 10)
	}
	scenarios := cfg.scenarios()
	if len(cfg.totalConns) > 1 {
		env.Extra[schema.ExtraOrderSeed] = strconv.FormatInt(harness.Shuffle(scenarios, cfg.orderSeed), 10)
	}
	file := schema.NewFile(name, env)

	// One session per server: the one at -addr, or each one started.
	work, workErr := newWorkload(cfg.streamMsgs, newChatSpots())
	err = errors.Join(err, workErr)
	specs := cfg.servers()
	var sessions []*session
	if len(specs) == 0 {
		sessions = append(sessions, &session{cfg: cfg, impl: cfg.impl, addr: cfg.addr, lisp: lisp, work: work, progress: log, stallGrace: stallGrace})
	}
	for _, spec := range specs {
		sessions = append(sessions, &session{cfg: cfg, impl: spec.impl, lisp: lisp, work: work, progress: log, stallGrace: stallGrace, quota: cfg.firstQuota()})
	}
	if len(specs) > 0 {
		// Deferred as well as done below, so that no path, a panic
		// included, leaves a server running.
		defer func() {
			for _, ss := range sessions {
				ss.stop()
			}
		}()
		for i, spec := range specs {
			if err == nil {
				err = sessions[i].start(ctx, spec, place.Server)
			}
		}
	}
	if err != nil {
		// Every scenario is recorded as failed, so that the report shows
		// why the run measured nothing.
		for _, ss := range sessions {
			for _, s := range scenarios {
				var params map[string]any
				if ss.work != nil {
					params = ss.params(s)
				}
				file.Results = append(file.Results, harness.ErrorResult(ss.scenarioName(s), params, err))
			}
		}
		return file
	}

	recordCPUClock(file.Environment.Extra, sessions)
	for _, s := range scenarios {
		file.Results = append(file.Results, interleave(ctx, sessions, s)...)
	}
	for _, ss := range sessions {
		ss.stop()
	}
	return file
}

// recordCPUClock says in the results where the servers' CPU time was read:
// their cgroups' microseconds, or /proc's clock ticks.
func recordCPUClock(extra map[string]string, sessions []*session) {
	var clocks []string
	for _, ss := range sessions {
		if ss.cpuClock != "" && !slices.Contains(clocks, ss.cpuClock) {
			clocks = append(clocks, ss.cpuClock)
		}
	}
	if len(clocks) > 0 {
		extra[schema.ExtraServerCPUClock] = strings.Join(clocks, ", ")
	}
}

// start starts the session's server on the given CPUs.
func (ss *session) start(ctx context.Context, spec serverSpec, cpus cpuset.Set) error {
	srv, err := serverproc.Start(ctx, serverproc.Spec{
		// The TLS flags name files at paths of this run: not part of the
		// recorded server arguments (the "transport" parameter says TLS).
		Argv:         append(append([]string{spec.path, "-addr", "127.0.0.1:0"}, spec.args...), ss.cfg.tls.serverArgs()...),
		Env:          ss.cfg.tls.serverEnv(),
		ReadyTimeout: serverReadyTimeout,
		StopGrace:    serverStopGrace,
		Log:          ss.progress,
		Check:        serverproc.CheckLoopback,
		CPUs:         cpus,
		// Its own cgroup where the host allows one, for its CPU pressure;
		// with -server_cpu_quota, a cap it must have.
		Cgroup:     true,
		CgroupName: spec.impl,
		CPUQuota:   ss.quota.Cores,
		CPUPeriod:  ss.quota.Period,
	})
	if err != nil {
		return fmt.Errorf("starting %s: %w", spec.path, err)
	}
	fmt.Fprintf(ss.progress, "[%s] %s server %s (pid %d) listening on %s\n", suite, spec.impl, spec.path, srv.PID(), srv.Addr())
	cpu := harness.NewServerCPU(srv.PID(), srv.Cgroup())
	ss.server, ss.addr, ss.cpu, ss.cpuClock = srv, srv.Addr(), cpu, cpu.CPUClock()
	ss.spec, ss.cpus = spec, cpus
	return nil
}

// owned reports whether the session starts its own server (not -addr).
func (ss *session) owned() bool { return ss.spec.path != "" }

// restart stops the session's server and starts it again, as it was. On
// failure the session has no server, no address and no CPU source, so that
// nothing is measured against the old server's port (which another process,
// the rival's restarted server included, may have taken) or its dead PID.
func (ss *session) restart(ctx context.Context) error {
	ss.stop()
	if err := ss.start(ctx, ss.spec, ss.cpus); err != nil {
		ss.addr, ss.cpu = "", nil
		return err
	}
	return nil
}

// stop stops the session's server, if it started one; a second call does
// nothing.
func (ss *session) stop() {
	if ss.server == nil {
		return
	}
	if err := ss.server.Stop(); err != nil {
		fmt.Fprintf(ss.progress, "[%s] %v\n", suite, err)
	}
	ss.server = nil
}
