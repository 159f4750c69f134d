package reportlayout

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func init() {
	primary := []string{schema.MetricReqPerSec, schema.MetricServerCPUPerOp, schema.MetricLatencyP99}
	report.Register(report.Suite{Name: "handlercost", Primary: primary,
		Layout: handlerCostLayout("Handler cost: Go vs Common Lisp", pinned)})
	report.Register(report.Suite{Name: "handlercost_shared_cpus", Primary: primary,
		Layout: handlerCostLayout("Handler cost, the servers sharing every CPU with the load generator: Go vs Common Lisp",
			sharedCPUs)})
}
