package harness

import (
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Metric names the harness produces. Reports and suites refer to them; keep
// them stable, since renaming one breaks comparisons with stored results.
const (
	MetricWallTime  = "wall_time"
	MetricOps       = "ops"
	MetricErrors    = "errors"
	MetricReqPerSec = "req_per_s"
	MetricMsgPerSec = "msg_per_s"
	MetricNsPerOp   = "ns_per_op"
	MetricClientCPU = "client_cpu"
	MetricServerCPU = "server_cpu"
	MetricTotalCPU  = "total_cpu"
	// CPU per operation, client and server apart: on a shared machine the
	// ratio of two servers' req/s mixes in the load generator's cost, and
	// these do not.
	MetricClientCPUPerOp = "client_cpu_per_op"
	MetricServerCPUPerOp = "server_cpu_per_op"
	MetricCPUPerWall     = "cpu_per_wall"
	MetricLatencyP50     = "latency_p50"
	MetricLatencyP90     = "latency_p90"
	MetricLatencyP95     = "latency_p95"
	MetricLatencyP99     = "latency_p99"
	MetricLatencyP999    = "latency_p999"
	MetricLatencyMax     = "latency_max"
	MetricBytesPerOp     = "bytes_per_op"
	MetricAllocsPerOp    = "allocs_per_op"
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
	{MetricClientCPUPerOp, schema.UnitNsPerOp, schema.LowerIsBetter, func(r Rep) float64 { return perOp(r.ClientCPU.Total(), r.Ops) }},
	{MetricServerCPUPerOp, schema.UnitNsPerOp, schema.LowerIsBetter, func(r Rep) float64 { return perOp(r.ServerCPU.Total(), r.Ops) }},
	{MetricCPUPerWall, schema.UnitRatio, schema.LowerIsBetter, Rep.CPUPerWall},
	{MetricLatencyP50, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P50) }},
	{MetricLatencyP90, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P90) }},
	{MetricLatencyP95, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P95) }},
	{MetricLatencyP99, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P99) }},
	{MetricLatencyP999, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P999) }},
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
		serverMetric := d.name == MetricServerCPU || d.name == MetricServerCPUPerOp
		if (serverMetric && !hasServer) || (d.name == MetricMsgPerSec && !streams) {
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

// perOp is cpu per operation in nanoseconds, or 0 when nothing completed.
func perOp(cpu time.Duration, ops int64) float64 {
	if ops <= 0 {
		return 0
	}
	return float64(cpu.Nanoseconds()) / float64(ops)
}
