package schema

// primaryMetrics are the metrics a regression gate judges each suite on:
// one form of its throughput, what the server spends per operation, and
// the latency its goals name; where a suite's point is latency at a fixed
// load (open loop) or size (connection scale), those. Every other metric
// is shown beside them and never gated on: tested together, twenty metrics
// of one scenario find a "significant" change by chance in most runs.
var primaryMetrics = map[string][]string{
	"routeguide":          {MetricReqPerSec, MetricServerCPUPerOp, MetricLatencyP50},
	"routeguide_capped":   {MetricReqPerSec, MetricServerCPUPerOp},
	"routeguide_quota":    {MetricReqPerSec, MetricServerCPUPerOp},
	"routeguide_shared":   {MetricReqPerSec, MetricServerCPUPerOp},
	"routeguide_openloop": {MetricLatencyP50, MetricLatencyP99, MetricServerCPUPerOp},
	"connscale":           {MetricReqPerSec, MetricServerCPUPerOp, MetricServerMarginalRSSPerConn},
	"qps":                 {MetricQPSPerServerCore, MetricLatencyP50},
	"tournament":          {MetricNsPerOp, MetricBytesPerOp},
	"kubernetes":          {MetricNsPerOp},
	"cri":                 {MetricNsPerOp, MetricServerCPUPerOp},
	"handlercost":         {MetricReqPerSec, MetricServerCPUPerOp, MetricLatencyP99},
}

// defaultPrimaryMetrics serve a suite not listed above.
var defaultPrimaryMetrics = []string{MetricReqPerSec, MetricNsPerOp, MetricServerCPUPerOp}

// IsPrimaryMetric reports whether a regression gate judges suite on metric.
func IsPrimaryMetric(suite, metric string) bool {
	names, ok := primaryMetrics[suite]
	if !ok {
		names = defaultPrimaryMetrics
	}
	for _, n := range names {
		if n == metric {
			return true
		}
	}
	return false
}
