// Command loadgen is the handler-cost suite's load generator: it starts the
// Go and the Lisp handler-cost servers (-server, -rival) on the server's
// CPUs (go/bench/placement), calls their Fast, Sleep and Spin methods with
// grpc-go from many callers over a few connections, the two servers taking
// turns repetition by repetition (harness.InTurns), and records calls/s,
// latency and each side's CPU per call through the shared harness.
//
// Cells: each handler kind (-kinds) over each connection count (-conns),
// and, with -polls, a long-poll mix: long Sleep calls held open on every
// connection while cheap Fast calls are measured beside them. All traffic
// stays on the loopback interface.
package main

import (
	"os"

	"github.com/grpcbench/grpcbench/go/bench/harness"

	// The suites' layouts and goals, for the report this program prints.
	_ "github.com/grpcbench/grpcbench/go/handlercost/reportlayout"
)

func main() {
	ctx, stop := harness.SignalContext()
	defer stop()
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}
