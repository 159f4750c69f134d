package harness

import (
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// metricDef derives one metric from a repetition.
type metricDef struct {
	name   string
	unit   string
	better schema.Better
	value  func(Rep) float64
}

var metricDefs = []metricDef{
	{schema.MetricWallTime, schema.UnitSeconds, schema.LowerIsBetter, func(r Rep) float64 { return r.Wall.Seconds() }},
	{schema.MetricOps, schema.UnitCount, schema.HigherIsBetter, func(r Rep) float64 { return float64(r.Ops) }},
	{schema.MetricErrors, schema.UnitCount, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Errors) }},
	{schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, Rep.OpsPerSec},
	{schema.MetricMsgPerSec, schema.UnitMsgPerSec, schema.HigherIsBetter, Rep.MsgsPerSec},
	{schema.MetricNsPerOp, schema.UnitNsPerOp, schema.LowerIsBetter, Rep.NsPerOp},
	{schema.MetricClientCPU, schema.UnitSeconds, schema.LowerIsBetter, func(r Rep) float64 { return r.ClientCPU.Total().Seconds() }},
	{schema.MetricServerCPU, schema.UnitSeconds, schema.LowerIsBetter, func(r Rep) float64 { return r.ServerCPU.Total().Seconds() }},
	{schema.MetricTotalCPU, schema.UnitSeconds, schema.LowerIsBetter, func(r Rep) float64 { return r.TotalCPU().Seconds() }},
	{schema.MetricClientCPUPerOp, schema.UnitNsPerOp, schema.LowerIsBetter, func(r Rep) float64 { return perOp(r.ClientCPU.Total(), r.Ops) }},
	{schema.MetricServerCPUPerOp, schema.UnitNsPerOp, schema.LowerIsBetter, func(r Rep) float64 { return perOp(r.ServerCPU.Total(), r.Ops) }},
	{schema.MetricCPUPerWall, schema.UnitRatio, schema.LowerIsBetter, Rep.CPUPerWall},
	{schema.MetricLatencyP50, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P50) }},
	{schema.MetricLatencyP90, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P90) }},
	{schema.MetricLatencyP95, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P95) }},
	{schema.MetricLatencyP99, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P99) }},
	{schema.MetricLatencyP999, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.P999) }},
	{schema.MetricLatencyMax, schema.UnitNanoseconds, schema.LowerIsBetter, func(r Rep) float64 { return float64(r.Latency.Max) }},
	{schema.MetricBytesPerOp, schema.UnitBytesPerOp, schema.LowerIsBetter, Rep.BytesPerOp},
	{schema.MetricAllocsPerOp, schema.UnitAllocsPerOp, schema.LowerIsBetter, Rep.AllocsPerOp},
}

// Metrics turns repetitions into schema metrics, one value per repetition
// each. Server CPU and allocations per operation appear only when every
// repetition measured them, and
// messages/s only when the operations carried more than one message each,
// so unary suites do not report a copy of req/s.
func Metrics(reps []Rep) []schema.Metric {
	if len(reps) == 0 {
		return nil
	}
	hasServer, hasAllocs, streams := true, true, false
	for _, r := range reps {
		hasServer = hasServer && r.HasServerCPU
		hasAllocs = hasAllocs && !r.AllocsUnmeasured
		streams = streams || r.Msgs > r.Ops
	}
	var out []schema.Metric
	for _, d := range metricDefs {
		serverMetric := d.name == schema.MetricServerCPU || d.name == schema.MetricServerCPUPerOp
		if (serverMetric && !hasServer) || (d.name == schema.MetricMsgPerSec && !streams) ||
			(d.name == schema.MetricAllocsPerOp && !hasAllocs) {
			continue
		}
		values := make([]float64, len(reps))
		for i, r := range reps {
			values[i] = d.value(r)
		}
		out = append(out, schema.NewMetric(d.name, d.unit, d.better, values))
	}
	out = append(out, utilisationMetrics(reps)...)
	out = append(out, sendLagMetrics(reps)...)
	out = append(out, pressureMetric(reps)...)
	out = append(out, serverConditionMetrics(reps)...)
	return append(out, stealMetric(reps)...)
}

// utilisationMetrics are each side's utilisation per repetition, for the
// sides whose cores every repetition knew.
func utilisationMetrics(reps []Rep) []schema.Metric {
	client, server := true, true
	for _, r := range reps {
		client = client && r.hasUtilisation()
		server = server && r.hasServerUtilisation()
	}
	var out []schema.Metric
	if client {
		out = append(out, repMetric(reps, schema.MetricClientUtilisation, Rep.ClientUtilisation))
	}
	if server {
		out = append(out, repMetric(reps, schema.MetricServerUtilisation, Rep.ServerUtilisation))
	}
	return out
}

// repMetric is a ratio metric of one value per repetition. A utilisation is
// neither better nor worse in itself; "lower" only orders it.
func repMetric(reps []Rep, name string, value func(Rep) float64) schema.Metric {
	values := make([]float64, len(reps))
	for i, r := range reps {
		values[i] = value(r)
	}
	return schema.NewMetric(name, schema.UnitRatio, schema.LowerIsBetter, values)
}

// pressureMetric is the host's CPU pressure per repetition, if every one
// could read it.
func pressureMetric(reps []Rep) []schema.Metric {
	return shareMetric(reps, schema.MetricCPUPressure, func(r Rep) (float64, bool) { return r.CPUPressure, r.HasCPUPressure })
}

// shareMetric is a share of time per repetition (the host's CPU
// pressure or steal, the server's throttling), if every repetition could
// read it.
func shareMetric(reps []Rep, name string, value func(Rep) (float64, bool)) []schema.Metric {
	values := make([]float64, len(reps))
	for i, r := range reps {
		v, ok := value(r)
		if !ok {
			return nil
		}
		values[i] = v
	}
	return []schema.Metric{schema.NewMetric(name, schema.UnitRatio, schema.LowerIsBetter, values)}
}

// perOp is cpu per operation in nanoseconds, or 0 when nothing completed.
func perOp(cpu time.Duration, ops int64) float64 {
	if ops <= 0 {
		return 0
	}
	return float64(cpu.Nanoseconds()) / float64(ops)
}
