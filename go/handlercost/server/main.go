// Command server serves the handler-cost service (package wire: Fast, Sleep
// and Spin, raw octets) with grpc-go at its defaults, until SIGINT or
// SIGTERM.
//
// It prints "listening on HOST:PORT" to stdout once the port is bound, so
// that the load generator can start it with -addr 127.0.0.1:0 and read the
// chosen port, and then one "runtime ..." line (package runtimeline) with
// the parallelism and collector settings it runs with. Everything else goes
// to stderr.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// A second signal kills a shutdown that is taking too long.
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}
