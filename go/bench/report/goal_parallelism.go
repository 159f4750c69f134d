package report

import (
	"fmt"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// ServerParallelismTitle heads the tables of the parallelism each server
// said it runs with (its runtime line: Go's GOMAXPROCS, clgrpc's CPU
// count, both its affinity lowered to its cgroup's CPU limit).
const ServerParallelismTitle = "Server parallelism (the CPUs each server sized itself to)"

// unequalParallelism says why two servers' cells cannot be compared: the
// servers sized themselves to different parallelism, or only one of them
// said what it sized itself to. It is "" when both said the same, or
// neither said (results from before servers said it, or suites whose
// servers do not). The harness means to give both the same CPUs; this
// checks that their runtimes took the same.
func unequalParallelism(base, r Row) string {
	bm, okb := base.Metric(schema.MetricServerParallelism)
	xm, okx := r.Metric(schema.MetricServerParallelism)
	okb, okx = okb && bm.Median > 0, okx && xm.Median > 0
	switch {
	case !okb && !okx:
		return ""
	case okb != okx:
		return "only one server said its parallelism"
	case bm.Median != xm.Median:
		return fmt.Sprintf("the servers ran with %g and %g CPUs", bm.Median, xm.Median)
	}
	return ""
}
