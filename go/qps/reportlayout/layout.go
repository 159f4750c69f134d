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
		report.PivotTable{
			Title: "QPS per server core", GroupBy: []string{"payload", "client"},
			Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
			Metric: schema.MetricQPSPerServerCore, Names: report.ImplNames,
			Ratio: report.LispOverGoFactor,
		},
		report.PivotTable{
			Title: "Server utilisation (CPU time over wall time and the server's cores)", GroupBy: []string{"payload", "client"},
			Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
			Metric: schema.MetricServerUtilisation, Names: report.ImplNames,
		},
		report.PivotTable{
			Title: "Client utilisation (CPU time over wall time and the client's cores)", GroupBy: []string{"payload", "client"},
			Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
			Metric: schema.MetricClientUtilisation, Names: report.ImplNames,
		},
		report.PivotTable{
			Title: "Latency p99", GroupBy: []string{"payload", "client"},
			Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
			Metric: schema.MetricLatencyP99, Names: report.ImplNames,
		},
		// A worker serves every scenario in turn, so what it holds after a
		// repetition includes what earlier scenarios made it grow to.
		report.PivotTable{
			Title: "Server worker RSS (after each repetition; it serves every scenario, so it includes what earlier scenarios grew it to)", GroupBy: []string{"payload", "client"},
			Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
			Metric: schema.MetricServerRSS, Names: report.ImplNames,
			Ratio: report.LispOverGoFactor,
		},
		report.PivotTable{
			Title: "Server worker threads (after each repetition)", GroupBy: []string{"payload", "client"},
			Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
			Metric: schema.MetricServerThreads, Names: report.ImplNames,
		},
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
