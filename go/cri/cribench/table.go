package main

import (
	"fmt"
	"io"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// tableMetrics are the columns of the scenario table: the report's "cri"
// metrics, with CPU and heap split into client and server.
var tableMetrics = []string{
	harness.MetricWallTime, harness.MetricTotalCPU, harness.MetricClientCPU, harness.MetricServerCPU,
	harness.MetricCPUPerWall, harness.MetricLatencyP50, harness.MetricLatencyP99,
	harness.MetricBytesPerOp, harness.MetricAllocsPerOp, metricServerBytesPerOp, metricServerAllocsPerOp,
	metricCPUPressure, harness.MetricErrors,
}

// printTable writes one row per scenario, medians over repetitions. The
// report that follows compares methods only where two or more ran; this
// table shows every scenario, one method too.
func printTable(w io.Writer, results []schema.Result) {
	t := report.Table{Header: []string{"Scenario"}}
	for _, m := range tableMetrics {
		t.Header = append(t.Header, metricLabel(m))
	}
	for _, r := range results {
		row := []string{r.Scenario}
		for _, name := range tableMetrics {
			cell := "-"
			if m, ok := r.Metric(name); ok {
				cell = formatCell(name, m)
			}
			row = append(row, cell)
		}
		if r.Status != schema.StatusOK {
			row = append(row[:1], "error: "+r.Error)
		}
		t.Rows = append(t.Rows, row)
	}
	fmt.Fprint(w, t.Markdown())
}

// metricLabel is a column header: the report's label, or for cri-bench's
// own metrics one in the same style.
func metricLabel(name string) string {
	switch name {
	case metricServerBytesPerOp:
		return "Server bytes/op"
	case metricServerAllocsPerOp:
		return "Server allocs/op"
	}
	return report.MetricLabel(name)
}

// formatCell formats a median as the report does.
func formatCell(name string, m schema.Metric) string {
	return report.FormatMetric(name, m.Median, m.Unit)
}
