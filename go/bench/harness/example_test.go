package harness_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// A benchmark binary: shared flags, one Runner per scenario, one Emit.
// (It has no Output comment, so `go test` compiles it but does not run it:
// its numbers depend on the machine.)
func Example() {
	flags := &harness.Flags{Reps: 3, Warmup: harness.Warmup{Duration: time.Second}}
	fs := flag.NewFlagSet("routeguide_bench", flag.ContinueOnError)
	flags.Register(fs)
	duration := fs.Duration("duration", 5*time.Second, "measured time per repetition")
	flags.MustParse(fs, os.Args[1:])

	file := schema.NewFile("routeguide", flags.Environment())
	for _, clients := range []int{1, 10, 100} {
		scenario := fmt.Sprintf("go/unary/clients=%d", clients)
		params := map[string]any{"impl": "go", "rpc": "unary", "clients": clients, "duration": duration.String()}
		r := &harness.Runner{
			Suite: "routeguide", Scenario: scenario, Progress: os.Stderr,
			Plan: harness.Plan{Workers: clients, Duration: *duration, Reps: flags.Reps, Warmup: flags.Warmup},
			// Server: harness.NewProcessCPU(serverCmd.Process.Pid),
		}
		reps, err := r.Run(context.Background(), func(ctx context.Context, worker int) (int, error) {
			// _, err := clients[worker].GetFeature(ctx, point)
			return 1, nil
		})
		file.Results = append(file.Results, harness.Result(scenario, params, reps, err))
	}
	if err := flags.Emit(os.Stdout, file, "github.com/grpcbench/grpcbench/go/routeguide/bench"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
