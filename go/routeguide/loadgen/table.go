package main

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// summaryTable is the per-scenario table printed after the report: the
// numbers someone watching a run wants at a glance. Values are medians over
// the repetitions, except errors, which are summed: one failure in any
// repetition is worth seeing.
func summaryTable(results []schema.Result) report.Table {
	t := report.Table{Header: []string{"Scenario", "Status", "req/s", "msg/s", "Errors", "p50", "p90", "p99"}}
	for _, r := range results {
		status := string(r.Status)
		if r.Status != schema.StatusOK {
			status += ": " + r.Error
		}
		row := []string{r.Scenario, status}
		for _, name := range []string{schema.MetricReqPerSec, schema.MetricMsgPerSec} {
			row = append(row, medianCell(r, name))
		}
		row = append(row, errorsCell(r))
		for _, name := range []string{schema.MetricLatencyP50, schema.MetricLatencyP90, schema.MetricLatencyP99} {
			row = append(row, medianCell(r, name))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// medianCell formats a metric's median, or "—" when the scenario lacks it
// (a failed scenario; msg/s of unary calls, which equals req/s).
func medianCell(r schema.Result, name string) string {
	m, ok := r.Metric(name)
	if !ok {
		return "—"
	}
	return report.FormatValue(m.Median, m.Unit)
}

func errorsCell(r schema.Result) string {
	m, ok := r.Metric(schema.MetricErrors)
	if !ok {
		return "—"
	}
	total := 0.0
	for _, v := range m.Reps {
		total += v
	}
	return report.FormatNumber(total)
}
