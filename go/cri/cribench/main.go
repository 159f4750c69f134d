// Command cri-bench measures the kubelet-facing CRI container listing:
// unary ListContainers, KEP-5825's StreamContainers (one container per
// message) and grpcbench's ListContainersChunked (per_chunk containers per
// message), against the mock runtime of //go/cri/mockcri.
//
// By default it starts the mock server as a separate process (-server, on a
// unix socket in a temporary directory, as kubelet talks to a runtime), one
// per container count, so that client and server CPU and memory are
// measured apart; -endpoint connects to a server that is already running.
// Every operation is a complete listing whose container count is checked,
// so a broken server shows as errors rather than as speed.
//
//	cri-bench -server bazel-bin/go/cri/mockcri/cmd/mockcri/mockcri_/mockcri \
//	    -mode list,stream,chunked -containers 32,1024 -annotations 32 -per_chunk 16,256 -n 100
//
// It prints a table of the scenarios (stdout) and the suite's report
// (layout "cri"), and writes the results file with -out.
package main

import (
	"os"

	"github.com/grpcbench/grpcbench/go/bench/harness"

	// The suite's layout and goals, for the report this program prints.
	_ "github.com/grpcbench/grpcbench/go/cri/reportlayout"
)

func main() {
	ctx, stop := harness.SignalContext()
	defer stop()
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}
