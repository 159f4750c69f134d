// Command mockcri serves a mock CRI runtime (package mockcri) until SIGINT
// or SIGTERM, on a unix socket as kubelet and crictl expect, or on loopback
// TCP.
//
// It prints exactly one line to stdout, "listening on ENDPOINT" (e.g.
// "listening on unix:///tmp/x/mockcri.sock"), once the socket is bound, so a
// parent process can wait for it; with tcp://127.0.0.1:0 the line names the
// chosen port. Everything else goes to stderr.
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
	// one kills a shutdown that is taking too long.
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}
