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

	"github.com/grpcbench/grpcbench/go/handlercost/wire"
	"github.com/grpcbench/grpcbench/go/internal/runtimeline"
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
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		return exitUsage
	}
	if err := serve(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "handlercost server: %v\n", err)
		return exitError
	}
	return exitOK
}

// newServer is grpc-go with the raw codec and the service, and the tuning
// options given (none: its defaults).
func newServer(tuning ...grpc.ServerOption) *grpc.Server {
	srv := grpc.NewServer(append([]grpc.ServerOption{grpc.ForceServerCodec(wire.Codec{})}, tuning...)...)
	srv.RegisterService(&serviceDesc, struct{}{})
	return srv
}

// serve listens, announces the bound address on stdout, and serves until
// ctx is done or the server fails.
func serve(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	lis, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := newServer(cfg.tuning.Apply()...)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()

	// The socket already listens: a client that connects as soon as it
	// reads the line is queued by the kernel until Serve accepts.
	heapReports := runtimeline.CatchHeapReports()
	if _, err := fmt.Fprintf(stdout, "listening on %s\n%s %s\n", lis.Addr(), runtimeline.Line(), runtimeline.HeapReportKey); err != nil {
		srv.Stop()
		return fmt.Errorf("announcing the address: %w", err)
	}
	reports, stopReports := context.WithCancel(ctx)
	defer stopReports()
	heapReports.Serve(reports, stdout)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "handlercost server: shutting down")
	// Calls in flight (a long poll) get the timeout to finish, then every
	// connection is closed.
	timer := time.AfterFunc(cfg.shutdownTimeout, srv.Stop)
	defer timer.Stop()
	srv.GracefulStop()
	return nil
}
