package reportlayout

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// The suites go/routeguide/loadgen writes. Each names the metrics a
// regression gate judges it on: throughput and server CPU per request,
// with the latency its goals name; the open loop's point is latency at a
// fixed offered load, connection scale's what each connection costs. The
// TLS suites are gated on report.DefaultPrimaryMetrics.
func init() {
	throughputAndCPU := []string{schema.MetricReqPerSec, schema.MetricServerCPUPerOp}
	for _, s := range []report.Suite{
		{Name: "routeguide", Layout: routeguideLayout,
			Primary: []string{schema.MetricReqPerSec, schema.MetricServerCPUPerOp, schema.MetricLatencyP50}},
		{Name: "routeguide_capped", Layout: cappedLayout, Primary: throughputAndCPU},
		{Name: "routeguide_quota", Layout: quotaSweepLayout, Primary: throughputAndCPU},
		{Name: "routeguide_shared", Layout: sharedConnLayout, Primary: throughputAndCPU},
		{Name: "routeguide_openloop", Layout: openLoopLayout,
			Primary: []string{schema.MetricLatencyP50, schema.MetricLatencyP99, schema.MetricServerCPUPerOp}},
		{Name: "connscale", Layout: connScaleLayout,
			Primary: []string{schema.MetricReqPerSec, schema.MetricServerCPUPerOp, schema.MetricServerMarginalRSSPerConn}},
		{Name: "routeguide_tls", Layout: routeguideTLSLayout},
		{Name: "connscale_tls", Layout: connScaleTLSLayout},
	} {
		report.Register(s)
	}
}
