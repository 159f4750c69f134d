package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
)

// How long a server may take to announce itself, and to stop. An SBCL
// server maps a core of tens of megabytes first; the stop grace is longer
// than the servers' own 5 s graceful stop.
const (
	serverReadyTimeout = 30 * time.Second
	serverStopGrace    = 10 * time.Second
)

// server is a started server and where its CPU time is read.
type server struct {
	spec serverSpec
	proc *serverproc.Process
	cpu  *harness.ProcessCPU
}

// startServer starts spec on the given CPUs, in cgroups of its own where
// the host allows them.
func startServer(ctx context.Context, spec serverSpec, cpus cpuset.Set, log io.Writer) (*server, error) {
	proc, err := serverproc.Start(ctx, serverproc.Spec{
		Argv:         append([]string{spec.Path, "-addr", "127.0.0.1:0"}, spec.Args...),
		ReadyTimeout: serverReadyTimeout,
		StopGrace:    serverStopGrace,
		Log:          log,
		Check:        serverproc.CheckLoopback,
		CPUs:         cpus,
		Cgroup:       true,
		CgroupName:   spec.Label,
	})
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.Path, err)
	}
	fmt.Fprintf(log, "[%s] %s server (pid %d) listening on %s\n", suite, spec.Label, proc.PID(), proc.Addr())
	return &server{spec: spec, proc: proc, cpu: harness.NewServerCPU(proc.PID(), proc.Cgroup())}, nil
}

// stop stops the server, saying on log why that failed, if it did.
func (s *server) stop(log io.Writer) {
	if err := s.proc.Stop(); err != nil {
		fmt.Fprintf(log, "[%s] %s server: %v\n", suite, s.spec.Label, err)
	}
}
