package reportlayout

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func init() {
	report.Register(report.Suite{Name: "handlercost", Layout: handlerCostLayout,
		Primary: []string{schema.MetricReqPerSec, schema.MetricServerCPUPerOp, schema.MetricLatencyP99}})
}
