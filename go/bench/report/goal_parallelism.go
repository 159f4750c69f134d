package report

import (
	"fmt"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// serverCPUsTitle heads the tables of the parallelism each server said it
// runs with (its runtime line: Go's GOMAXPROCS, clgrpc's CPU count).
const serverCPUsTitle = "Server CPUs (the parallelism each server sized itself to)"

// unequalParallelism says why two servers' cells cannot be compared when
// the servers sized themselves to different parallelism (one saw more
// CPUs than the other), or "" when both said the same or either did not
// say: the harness means to give both the same, and this checks that
// their runtimes agreed.
func unequalParallelism(base, r Row) string {
	bm, okb := base.Metric(schema.MetricServerCPUs)
	xm, okx := r.Metric(schema.MetricServerCPUs)
	if !okb || !okx || bm.Median <= 0 || xm.Median <= 0 || bm.Median == xm.Median {
		return ""
	}
	return fmt.Sprintf("the servers ran with %g and %g CPUs", bm.Median, xm.Median)
}
