package suites_test

import (
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// registeredSuites are the suites the benchmark targets of this repository
// write, each with a metric its regression gate must judge.
var registeredSuites = map[string]string{
	"cri":                     schema.MetricServerCPUPerOp,
	"tournament":              schema.MetricBytesPerOp,
	"kubernetes":              schema.MetricNsPerOp,
	"qps":                     schema.MetricQPSPerServerCore,
	"handlercost":             schema.MetricLatencyP99,
	"handlercost_shared_cpus": schema.MetricLatencyP99,
	"routeguide":              schema.MetricLatencyP50,
	"routeguide_openloop":     schema.MetricLatencyP99,
	"routeguide_capped":       schema.MetricServerCPUPerOp,
	"routeguide_quota":        schema.MetricServerCPUPerOp,
	"routeguide_shared":       schema.MetricServerCPUPerOp,
	"connscale":               schema.MetricServerMarginalRSSPerConn,
	"routeguide_tls":          schema.MetricReqPerSec,
	"connscale_tls":           schema.MetricReqPerSec,
}

// Every suite the benchmark targets of this repository write has a layout
// of its own, and the metrics its regression gate judges.
func TestEverySuiteIsRegistered(t *testing.T) {
	for suite, gated := range registeredSuites {
		s, ok := report.RegisteredSuite(suite)
		if !ok || len(s.Layout.Sections) == 0 {
			t.Errorf("suite %s: no layout registered", suite)
		}
		if !report.IsPrimaryMetric(suite, gated) {
			t.Errorf("suite %s: not gated on %s", suite, gated)
		}
	}
}

// Every goal names the operating point it is judged at: a verdict reaches
// no further than the load, connections, CPUs and handlers it was measured
// with.
func TestEveryGoalNamesItsOperatingPoint(t *testing.T) {
	goals := 0
	for suite := range registeredSuites {
		s, _ := report.RegisteredSuite(suite)
		for _, section := range s.Layout.Sections {
			var title, point string
			switch g := section.(type) {
			case report.Goal:
				title, point = g.Title, g.Point
			case report.BoundGoal:
				title, point = g.Title, g.Point
			default:
				continue
			}
			goals++
			if point == "" {
				t.Errorf("suite %s: goal %q names no operating point", suite, title)
			}
		}
	}
	if goals == 0 {
		t.Fatal("no goal found in any registered suite")
	}
}
