package suites_test

import (
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Every suite the benchmark targets of this repository write has a layout
// of its own, and the metrics its regression gate judges.
func TestEverySuiteIsRegistered(t *testing.T) {
	for suite, gated := range map[string]string{
		"cri":                 schema.MetricServerCPUPerOp,
		"tournament":          schema.MetricBytesPerOp,
		"kubernetes":          schema.MetricNsPerOp,
		"qps":                 schema.MetricQPSPerServerCore,
		"handlercost":         schema.MetricLatencyP99,
		"routeguide":          schema.MetricLatencyP50,
		"routeguide_openloop": schema.MetricLatencyP99,
		"routeguide_capped":   schema.MetricServerCPUPerOp,
		"routeguide_quota":    schema.MetricServerCPUPerOp,
		"routeguide_shared":   schema.MetricServerCPUPerOp,
		"connscale":           schema.MetricServerMarginalRSSPerConn,
		"routeguide_tls":      schema.MetricReqPerSec,
		"connscale_tls":       schema.MetricReqPerSec,
	} {
		s, ok := report.RegisteredSuite(suite)
		if !ok || len(s.Layout.Sections) == 0 {
			t.Errorf("suite %s: no layout registered", suite)
		}
		if !report.IsPrimaryMetric(suite, gated) {
			t.Errorf("suite %s: not gated on %s", suite, gated)
		}
	}
}
