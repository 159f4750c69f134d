package main

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// tableMetrics are the columns of the scenario table: the report's "cri"
// metrics, with CPU and heap split into client and server.
var tableMetrics = []string{
	schema.MetricWallTime, schema.MetricTotalCPU, schema.MetricClientCPU, schema.MetricServerCPU,
	schema.MetricCPUPerWall, schema.MetricLatencyP50, schema.MetricLatencyP99,
	schema.MetricBytesPerOp, schema.MetricAllocsPerOp, schema.MetricServerBytesPerOp, schema.MetricServerAllocsPerOp,
	schema.MetricCPUPressure, schema.MetricErrors,
}

// summaryTable is one row per scenario, medians over repetitions. The
// report that follows compares methods only where two or more ran; this
// table shows every scenario, one method too.
func summaryTable(results []schema.Result) string {
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
	return t.Markdown()
}

// metricLabel is a column header: the report's label, or for cri-bench's
// own metrics one in the same style.
func metricLabel(name string) string {
	switch name {
	case schema.MetricServerBytesPerOp:
		return "Server bytes/op"
	case schema.MetricServerAllocsPerOp:
		return "Server allocs/op"
	}
	return report.MetricLabel(name)
}

// formatCell formats a median as the report does.
func formatCell(name string, m schema.Metric) string {
	return report.FormatMetric(name, m.Median, m.Unit)
}
