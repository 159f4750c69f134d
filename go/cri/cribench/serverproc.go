package main

import (
	"context"
	"io"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/go/cri/mockcri"
)

// How long the mock server may take to announce itself (it generates its
// inventory first: well under a second even for 100k containers), and how
// long it has from SIGTERM to exit before SIGKILL. The grace exceeds the
// server's own graceful-shutdown timeout (5s), so a healthy server always
// exits on its own.
const (
	serverReadyTimeout = 30 * time.Second
	serverStopGrace    = 10 * time.Second
)

// startServer runs the mock server argv and waits for its announcement,
// "listening on ENDPOINT". The server's stderr, and its stdout after that
// line, go to log. On any failure the process is stopped before the error
// returns.
func startServer(ctx context.Context, argv []string, cpus cpuset.Set, log io.Writer) (*serverproc.Process, mockcri.Endpoint, error) {
	proc, err := serverproc.Start(ctx, serverproc.Spec{
		Argv:         argv,
		CPUs:         cpus,
		Cgroup:       true, // its own CPU pressure, where the host allows it
		ReadyTimeout: serverReadyTimeout,
		StopGrace:    serverStopGrace,
		Log:          log,
		Check: func(addr string) error {
			_, err := mockcri.ParseEndpoint(addr)
			return err
		},
	})
	if err != nil {
		return nil, mockcri.Endpoint{}, err
	}
	ep, err := mockcri.ParseEndpoint(proc.Addr()) // checked above: cannot fail
	return proc, ep, err
}
