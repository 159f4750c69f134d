package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"google.golang.org/grpc"

	"github.com/grpcbench/grpcbench/go/bench/cpuprofile"
	"github.com/grpcbench/grpcbench/go/internal/runtimeline"
	"github.com/grpcbench/grpcbench/go/routeguide/features"
	"github.com/grpcbench/grpcbench/go/routeguide/service"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
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
	if err := serve(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "routeguide server: %v\n", err)
		return exitError
	}
	return exitOK
}

// serve listens, announces the bound address on stdout, and serves until ctx
// is done or the server fails.
func serve(ctx context.Context, cfg config, stdout, stderr io.Writer) (err error) {
	db := features.Default()
	if cfg.dbPath != "" {
		var err error
		if db, err = features.Load(cfg.dbPath); err != nil {
			return err
		}
	}

	// A CPU profile in pprof's format, how the server's time is broken
	// down beside the Lisp server's sb-sprof profiles
	// (lisp/routeguide/tools/profile-server.sh); a benchmark never asks for
	// one, since sampling is not the runtime's default.
	stopProfile, err := cpuprofile.Start(cfg.cpuProfile)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopProfile()) }()

	lis, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	if cfg.limits.maxConnections > 0 {
		lis = &limitListener{Listener: lis, max: cfg.limits.maxConnections}
	}
	opts := append(cfg.limits.serverOptions(), grpc.Creds(cfg.creds))
	opts = append(opts, cfg.tuning.Apply()...)
	if cfg.maxConcurrentStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(cfg.maxConcurrentStreams))
	}
	srv := grpc.NewServer(opts...)
	pb.RegisterRouteGuideServer(srv, service.New(db))
	if cfg.heapReport {
		srv.RegisterService(&heapReportDesc, nil)
	}
	health := registerProbes(srv)

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(lis) }()

	// The socket is already listening, so a client that reads this line and
	// connects at once is queued by the kernel even if Serve has not yet
	// reached Accept.
	heapReports := runtimeline.CatchHeapReports()
	if err := announce(stdout, lis.Addr()); err != nil {
		srv.Stop()
		return fmt.Errorf("writing listen address: %w", err)
	}
	reports, stopReports := context.WithCancel(ctx)
	defer stopReports()
	heapReports.Serve(reports, stdout)

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "routeguide server: shutting down")
	// NOT_SERVING for the grace period, so that a load balancer stops
	// sending new calls while those in flight finish.
	health.Shutdown()
	stop(srv, cfg.shutdownTimeout, stderr)
	return nil
}

// announce writes the stdout line a parent process waits for, then the
// runtime's settings (runtimeline) and that SIGWINCH asks for a heap line,
// and flushes them in case stdout is buffered.
func announce(w io.Writer, addr net.Addr) error {
	if _, err := fmt.Fprintf(w, "listening on %s\n%s %s\n", addr, runtimeline.Line(), runtimeline.HeapReportKey); err != nil {
		return err
	}
	if f, ok := w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// stop lets RPCs in flight finish for up to timeout, then closes every
// connection: a benchmark client that never half-closes its streams must not
// keep the server alive forever.
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
		fmt.Fprintf(stderr, "routeguide server: RPCs still running after %v; closing connections\n", timeout)
		srv.Stop() // also makes the pending GracefulStop return
		<-done
	}
}
