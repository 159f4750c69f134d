// Command client calls the RouteGuide RPCs and prints a short report of each.
// With -serve it first starts the service in-process on a loopback port and
// talks to it over real TCP, which makes it the repository's self-contained
// demo.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Ctrl-C cancels the RPC in flight instead of killing the process, so
	// the client still reports what failed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}
