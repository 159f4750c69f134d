// Command server runs the RouteGuide gRPC service until SIGINT or SIGTERM.
//
// It prints "listening on HOST:PORT" to stdout once the port is bound, so a
// parent process can start it with -addr 127.0.0.1:0 and read the chosen
// port, and then one "runtime ..." line (package runtimeline) with the
// parallelism and collector settings it runs with. Everything else goes to
// stderr.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Restore default signal handling after the first signal, so a second
	// Ctrl-C kills a shutdown that is taking too long.
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}
