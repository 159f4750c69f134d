// Command loadgen is the RouteGuide load generator: the first suite of the
// benchmark mechanism (go/bench/harness). It drives one RouteGuide server,
// Go or Common Lisp, with the four RPC kinds at several client counts and
// records one schema result per scenario, so that the report's "routeguide"
// layout can put the two implementations side by side.
//
// It either starts the server itself (-server PATH, run with
// -addr 127.0.0.1:0, whose CPU time it then measures too) or uses a running
// one (-addr HOST:PORT). All traffic stays on the loopback interface.
//
// Each operation checks its answer against the standard feature database,
// so a broken server shows up as errors rather than as a fast run.
package main

import (
	"os"

	"github.com/grpcbench/grpcbench/go/bench/harness"

	// The RouteGuide suites' layout and goals, for the report this program prints.
	_ "github.com/grpcbench/grpcbench/go/routeguide/reportlayout"
)

func main() {
	ctx, stop := harness.SignalContext()
	defer stop()
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}
