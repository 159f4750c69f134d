package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	"github.com/grpcbench/grpcbench/go/routeguide/rgclient"
	"github.com/grpcbench/grpcbench/go/routeguide/service"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// run is the whole program minus signal wiring: args[0] is the program name,
// and the return value is the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if err := call(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "routeguide client: %v\n", err)
		return exitError
	}
	return exitOK
}

// call connects (starting the in-process server first with -serve) and runs
// the selected RPCs.
func call(ctx context.Context, cfg config, stdout io.Writer) error {
	addr := cfg.addr
	if cfg.serve {
		a, stop, err := serveInProcess()
		if err != nil {
			return fmt.Errorf("starting in-process server: %w", err)
		}
		defer stop()
		fmt.Fprintf(stdout, "in-process server listening on %s\n", a)
		addr = a
	}

	creds := cfg.creds
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", addr, err)
	}
	defer conn.Close()
	if err := rgclient.Run(ctx, pb.NewRouteGuideClient(conn), stdout, cfg.rpc); err != nil {
		return fmt.Errorf("server %s: %w", addr, err)
	}
	return nil
}

// serveInProcess starts the service on a free loopback port. The client
// still reaches it through the kernel's TCP stack, so the demo exercises the
// same path as a separate server process.
func serveInProcess() (addr string, stop func(), err error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := grpc.NewServer()
	pb.RegisterRouteGuideServer(srv, service.New(features.Default()))
	go srv.Serve(lis)
	// Stop, not GracefulStop: by the time it runs the client has finished
	// and closed its connection, so there is nothing left to drain.
	return lis.Addr().String(), srv.Stop, nil
}
