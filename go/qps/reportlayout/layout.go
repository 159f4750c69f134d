// Package reportlayout lays out the "qps" suite's results (go/qps/bench: gRPC's
// scenarios through the qps workers) in the benchmark report, and states its
// goal: it registers them with go/bench/report when linked in.
package reportlayout

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// gRPC's standard scenarios through the qps workers (go/qps/bench).
// Parameters: scenario, payload, server, client (go|lisp), rpc_type,
// channels, outstanding, and bottleneck (client|server|neither).
var qpsLayout = report.Layout{
	Title: "gRPC's benchmark scenarios, through the qps workers",
	Sections: []report.Section{
		qpsPivot("QPS per server core", schema.MetricQPSPerServerCore, report.LispOverGoFactor),
		qpsPivot("Server utilisation (CPU time over wall time and the server's cores)", schema.MetricServerUtilisation, nil),
		qpsPivot("Client utilisation (CPU time over wall time and the client's cores)", schema.MetricClientUtilisation, nil),
		qpsPivot("Latency p99", schema.MetricLatencyP99, nil),
		// A worker serves every scenario in turn, so what it holds after a
		// repetition includes what earlier scenarios made it grow to.
		qpsPivot("Server worker RSS (after each repetition; it serves every scenario, so it includes what earlier scenarios grew it to)", schema.MetricServerRSS, report.LispOverGoFactor),
		qpsPivot("Server worker threads (after each repetition)", schema.MetricServerThreads, nil),
		report.Goal{
			Title: "Goal",
			Statement: "In every scenario, the Lisp server's qps per server core is at least the Go " +
				"server's. A cell is judged when both servers were the bottleneck (at least 85% of " +
				"their cores busy, their client less), or when the verdict holds anyway: the Lisp " +
				"server at its capacity below a Go figure that can only understate Go's, or a Go " +
				"server at its capacity that the Lisp figure already matches. A figure a saturated " +
				"client set, or one neither side was pushed to, says nothing else about the server. " +
				"The bound must hold over the headroom each server had left (its figure over its share " +
				"of CPU busy).",
			Point: "each scenario's channels and calls in flight as gRPC's scenario configurations " +
				"define them, in a closed loop, at the payloads its tables name (empty messages in " +
				"//bench:all); the server worker pinned to half of the CPUs (one on 2 cores), the " +
				"client workers and the driver to the rest",
			GroupBy:    []string{"scenario", "payload", "client"},
			Vary:       []string{"server"},
			Baseline:   "go",
			Config:     map[string]string{"server": "lisp"},
			Names:      report.ImplNames,
			Limits:     []report.RatioLimit{{Metric: schema.MetricQPSPerServerCore, Min: 1}},
			Bottleneck: "bottleneck",
			Context:    report.Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation, schema.MetricServerCPUPerOp),
		},
	},
}

// qpsPivot is one metric of the qps suite: scenarios down, the Go and the
// Lisp server across, a table per payload and client, and their ratio if
// any.
func qpsPivot(title, metric string, ratio *report.PivotRatio) report.PivotTable {
	return report.PivotTable{
		Title: title, GroupBy: []string{"payload", "client"},
		Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
		Metric: metric, Names: report.ImplNames, Ratio: ratio,
	}
}
