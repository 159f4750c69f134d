package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"google.golang.org/grpc"

	"github.com/grpcbench/grpcbench/go/bench/cpuprofile"
	"github.com/grpcbench/grpcbench/go/cri/mockcri"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// run is the whole program minus signal wiring: it parses args (args[0] is
// the program name), serves until ctx is done, and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	debug.SetGCPercent(cfg.gcPercent)
	stopProfile, err := cpuprofile.Start(cfg.cpuProfile)
	if err != nil {
		fmt.Fprintf(stderr, "mockcri: %v\n", err)
		return exitError
	}
	err = serve(ctx, cfg, stdout, stderr)
	if perr := stopProfile(); err == nil && perr != nil {
		err = fmt.Errorf("cpu profile: %w", perr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mockcri: %v\n", err)
		return exitError
	}
	return exitOK
}

// serve generates the inventory, listens, announces the bound endpoint on
// stdout, and serves until ctx is done or the server fails. The inventory
// is generated before listening, so a client that sees the announcement
// never waits for it.
func serve(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	inv, err := mockcri.Generate(cfg.inventory)
	if err != nil {
		return err
	}
	lis, bound, err := mockcri.Listen(cfg.endpoint)
	if err != nil {
		return err
	}
	srv := mockcri.NewServer(inv, cfg.transport)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(lis) }()

	// The socket is already listening, so a client that reads this line and
	// connects at once is queued by the kernel even if Serve has not yet
	// reached Accept.
	if _, err := fmt.Fprintf(stdout, "listening on %s\n", bound); err != nil {
		srv.Stop()
		return fmt.Errorf("writing listen endpoint: %w", err)
	}
	fmt.Fprintf(stderr, "mockcri: %d containers in %d pods, %d labels and %d annotations each, seed %d\n",
		len(inv.Containers), len(inv.Pods), cfg.inventory.Labels, cfg.inventory.Annotations, cfg.inventory.Seed)

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	stop(srv, cfg.shutdownTimeout, stderr)
	return nil
}

// stop lets RPCs in flight finish for up to timeout, then closes every
// connection. Closing the listener removes the unix socket file.
func stop(srv *grpc.Server, timeout time.Duration, stderr io.Writer) {
	done := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(done)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		fmt.Fprintf(stderr, "mockcri: RPCs still running after %v; closing connections\n", timeout)
		srv.Stop()
		<-done
	}
}
