package harness

import (
	"fmt"
	"io"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// ScenarioFailures writes one line per failed scenario of file to w and
// returns how many failed. Every suite exits non-zero when any did, after
// emitting its results: the results say what failed, and a benchmark
// target's build fails instead of caching a failure as a measurement.
func ScenarioFailures(w io.Writer, file *schema.File) int {
	n := 0
	for _, r := range file.Results {
		if r.Status != schema.StatusOK {
			fmt.Fprintf(w, "%s: %s failed: %s\n", file.Suite, r.Scenario, r.Error)
			n++
		}
	}
	return n
}
