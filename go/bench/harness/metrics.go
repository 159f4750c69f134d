package harness

import (
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Metric names the harness produces. Reports and suites refer to them; keep
// them stable, since renaming one breaks comparisons with stored results.
const (
	MetricWallTime    = "wall_time"
	MetricOps         = "ops"
	MetricErrors      = "errors"
	MetricReqPerSec   = "req_per_s"
	MetricMsgPerSec   = "msg_per_s"
	MetricNsPerOp     = "ns_per_op"
	MetricClientCPU   = "client_cpu"
	MetricServerCPU   = "server_cpu"
	MetricTotalCPU    = "total_cpu"
	MetricCPUPerWall  = "cpu_per_wall"
	MetricLatencyP50  = "latency_p50"
	MetricLatencyP90  = "latency_p90"
	MetricLatencyP95  = "latency_p95"
	MetricLatencyP99  = "latency_p99"
	MetricLatencyMax  = "latency_max"
	MetricBytesPerOp  = "bytes_per_op"
	MetricAllocsPerOp = "allocs_per_op"
)

// metricDef derives one metric from a repetition.
type metricDef struct {
	name   string
	unit   string
	better schema.Better
	value  func(Rep) float64
}

var metricDefs = []metricDef{
	{MetricWallTime, schema.UnitSeconds, schema.LowerIsBetter, func(r Rep) float64 { return r.Wall.Seconds() }},
	{MetricOps, schema.UnitCount, schema.HigherIsBetter, func(r Rep) float64 { return float64(r.Ops) }},
	{MetricErrors, schema.UnitCount, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Errors) }},
	{MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, Rep.OpsPerSec},
	{MetricMsgPerSec, schema.UnitMsgPerSec, schema.HigherIsBetter, Rep.MsgsPerSec},
	{MetricNsPerOp, schema.UnitNsPerOp, schema.LowerIsBetter, Rep.NsPerOp},
	{MetricClientCPU, schema.UnitSeconds, schema.LowerIsBetter, func(r Rep) float64 { return r.ClientCPU.Total().Seconds() }},
	{MetricServerCPU, schema.UnitSeconds, schema.LowerIsBetter, func(r Rep) float64 { return r.ServerCPU.Total().Seconds() }},
	{MetricTotalCPU, schema.UnitSeconds, schema.LowerIsBetter, func(r Rep) float64 { return r.TotalCPU().Seconds() }},
	{MetricCPUPerWall, schema.UnitRatio, schema.LowerIsBetter, Rep.CPUPerWall},
	{MetricLatencyP50, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P50) }},
	{MetricLatencyP90, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P90) }},
	{MetricLatencyP95, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P95) }},
	{MetricLatencyP99, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P99) }},
	{MetricLatencyMax, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.Max) }},
	{MetricBytesPerOp, schema.UnitBytesPerOp, schema.LowerIsBetter, Rep.BytesPerOp},
	{MetricAllocsPerOp, schema.UnitAllocsPerOp, schema.LowerIsBetter, Rep.AllocsPerOp},
}

// Metrics turns repetitions into schema metrics, one value per repetition
// each. Server CPU appears only when every repetition measured it, and
// messages/s only when the operations carried more than one message each,
// so unary suites do not report a copy of req/s.
func Metrics(reps []Rep) []schema.Metric {
	if len(reps) == 0 {
		return nil
	}
	hasServer, streams := true, false
	for _, r := range reps {
		hasServer = hasServer && r.HasServerCPU
		streams = streams || r.Msgs > r.Ops
	}
	var out []schema.Metric
	for _, d := range metricDefs {
		if (d.name == MetricServerCPU && !hasServer) || (d.name == MetricMsgPerSec && !streams) {
			continue
		}
		values := make([]float64, len(reps))
		for i, r := range reps {
			values[i] = d.value(r)
		}
		out = append(out, schema.NewMetric(d.name, d.unit, d.better, values))
	}
	return out
}
