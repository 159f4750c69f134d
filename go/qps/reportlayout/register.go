package reportlayout

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func init() {
	report.Register(report.Suite{Name: "qps", Layout: qpsLayout,
		Primary: []string{schema.MetricQPSPerServerCore, schema.MetricLatencyP50}})
	report.Register(report.Suite{Name: "qps_quota", Layout: quotaLayout,
		Primary: []string{schema.MetricReqPerSec, schema.MetricServerCPUPerOp}})
}
