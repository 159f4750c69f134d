// Package reportlayout lays out the RouteGuide suites' results
// (go/routeguide/loadgen: the grid, its open loop, capped, quota-sweep and
// one-connection forms, connection scale, and TLS) in the benchmark report,
// and states their goals: it registers them with go/bench/report when
// linked in.
package reportlayout

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// everyServer orders the servers' columns: the defaults, then the tuned
// ones where a run measured them.
var everyServer = []string{"go", "lisp", "go_tuned", "lisp_tuned"}

// RouteGuide, Go vs Common Lisp: the server x client matrix.
// Parameters: impl (the server: go|lisp, or lisp_tuned), client (the load generator:
// go|lisp; absent in older files, which then render as one client),
// rpc (unary, server_streaming, client_streaming, bidi_streaming),
// clients (1, 10, 100). Server comparisons are made with the same
// client, client comparisons against the same server.
var routeguideLayout = report.Layout{
	Title: "RouteGuide: Go vs Common Lisp",
	Sections: []report.Section{
		report.PivotTable{
			Title: "Throughput", GroupBy: []string{"rpc", "client"},
			Rows: "clients", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricReqPerSec, Names: report.ImplNames,
			Ratio: report.LispOverGoPercent,
		},
		report.PivotTable{
			Title: "Throughput by client", GroupBy: []string{"rpc", "impl"},
			Rows: "clients", Cols: "client", ColOrder: everyServer,
			Metric: schema.MetricReqPerSec, Names: clientNames,
			Ratio: report.LispOverGoPercent,
		},
		// What each side spends per request: the server's CPU with the
		// same load generator, and each load generator's CPU against the
		// same server. Unlike req/s, these do not mix the two.
		report.PivotTable{
			Title: "Server CPU per request", GroupBy: []string{"rpc", "client"},
			Rows: "clients", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricServerCPUPerOp, Names: report.ImplNames,
			Ratio: report.LispOverGoFactor,
		},
		// What each server held to serve the cell, beside what it spent:
		// the CPU ratios above come with these.
		report.PivotTable{
			Title: "Server RSS (after each repetition)", GroupBy: []string{"rpc", "client"},
			Rows: "clients", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricServerRSS, Names: report.ImplNames,
			Ratio: report.LispOverGoFactor,
		},
		report.PivotTable{
			Title: report.LiveHeapTitle, GroupBy: []string{"rpc", "client"},
			Rows: "clients", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricServerLiveHeap, Names: report.ImplNames,
		},
		report.PivotTable{
			Title: "Server threads (after each repetition)", GroupBy: []string{"rpc", "client"},
			Rows: "clients", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricServerThreads, Names: report.ImplNames,
		},
		report.PivotTable{
			Title: report.ServerParallelismTitle, GroupBy: []string{"rpc", "client"},
			Rows: "clients", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricServerParallelism, Names: report.ImplNames,
		},
		report.PivotTable{
			Title: "Client CPU per request", GroupBy: []string{"rpc", "impl"},
			Rows: "clients", Cols: "client", ColOrder: everyServer,
			Metric: schema.MetricClientCPUPerOp, Names: clientNames,
			Ratio: report.LispOverGoFactor,
		},
		routeguideSpeedGoal,
		tunedPair(routeguideSpeedGoal),
		report.Scaling{
			Title: "Scaling efficiency", GroupBy: []string{"rpc", "client"},
			Series: "impl", X: "clients", Metric: schema.MetricReqPerSec, Names: report.ImplNames,
		},
		report.PivotTable{
			Title: "Requests/s by RPC type", GroupBy: []string{"impl", "client"},
			Rows: "rpc", Cols: "clients", Metric: schema.MetricReqPerSec, Corner: "RPC type",
		},
		report.PivotTable{
			Title: "Messages/s by RPC type", GroupBy: []string{"impl", "client"},
			Rows: "rpc", Cols: "clients", Metric: schema.MetricMsgPerSec, Corner: "RPC type",
		},
		report.PivotTable{
			Title: "Latency", GroupBy: []string{"rpc", "client"},
			Rows: "clients", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricLatencyP99, Names: report.ImplNames,
		},
		report.ChartSection{
			Title: "req/s by clients", GroupBy: []string{"impl", "client"}, Kind: report.LineChart,
			X: "clients", Series: "rpc", Metric: schema.MetricReqPerSec, LogY: true,
		},
		report.ChartSection{
			Title: "Go vs Lisp req/s", GroupBy: []string{"rpc", "client"}, Kind: report.BarChart,
			X: "clients", Series: "impl", Metric: schema.MetricReqPerSec, LogY: true, Names: report.ImplNames,
		},
	},
}

// RouteGuide open loop (the load generators' -rate): each request is due
// on a fixed schedule and its latency counts from then, so a stall shows
// in every request queued behind it. Parameters as "routeguide", plus
// rate (requests/s offered).
var openLoopLayout = report.Layout{
	Title: "RouteGuide open loop: latency at a fixed offered rate",
	Sections: []report.Section{
		openLoopLatency(schema.MetricLatencyP50),
		openLoopLatency(schema.MetricLatencyP99),
		openLoopLatency(schema.MetricLatencyP999),
		lispGoPivot("Achieved rate", []string{"rpc", "client", "clients"}, "rate", schema.MetricReqPerSec, nil),
		// How late the load generator started the calls: part of every
		// latency above, and the load generator's, not the server's.
		lispGoPivot("Send lag p99 (how late calls started after they were due)", []string{"rpc", "client", "clients"}, "rate", schema.MetricSendLagP99, nil),
		lispGoPivot("Send lag max", []string{"rpc", "client", "clients"}, "rate", schema.MetricSendLagMax, nil),
		// What each server held after each rate: one server serves every
		// rate in turn, so a figure includes what earlier rates grew it to.
		lispGoPivot("Server RSS (after each repetition; one server serves every rate, so it includes what earlier rates grew it to)", []string{"rpc", "client", "clients"}, "rate", schema.MetricServerRSS, report.LispOverGoFactor),
		lispGoPivot(report.LiveHeapTitle, []string{"rpc", "client", "clients"}, "rate", schema.MetricServerLiveHeap, nil),
		// The latency-versus-load curve of a rate sweep, up to each
		// server's saturation, where its latency climbs without bound.
		report.ChartSection{
			Title: "Latency p99 by offered rate", GroupBy: []string{"rpc", "client", "clients"}, Kind: report.LineChart,
			X: "rate", Series: "impl", Metric: schema.MetricLatencyP99, LogY: true, Names: report.ImplNames,
		},
	},
}

// connScalePoint is the operating point of the connection-scale goals.
const connScalePoint = "100, 1,000 and 10,000 connections open to each server, 100 of them " +
	"calling unary RouteGuide methods in a closed loop and the rest idle (preface and SETTINGS " +
	"sent); each server pinned to half of the CPUs (one on 2 cores), the load generator to the rest"

// Connection scale (bench/connscale): the RouteGuide servers holding
// 100 to 10,000 connections, 100 of them busy with unary calls and the
// rest idle. Parameters: impl (go|lisp), rpc, clients (the busy ones),
// total_conns, idle_conns.
var connScaleLayout = report.Layout{
	Title: "Connection scale: Go vs Common Lisp",
	Sections: []report.Section{
		report.PivotTable{
			Title: "Throughput", GroupBy: []string{"rpc", "clients"},
			Rows: "total_conns", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricReqPerSec, Names: report.ImplNames,
			Ratio: report.LispOverGoPercent,
		},
		report.PivotTable{
			Title: "Latency p99", GroupBy: []string{"rpc", "clients"},
			Rows: "total_conns", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricLatencyP99, Names: report.ImplNames,
		},
		report.PivotTable{
			Title: "Server marginal RSS per connection (anonymous RSS grown per connection opened, before any call)", GroupBy: []string{"rpc", "clients"},
			Rows: "total_conns", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricServerMarginalRSSPerConn, Names: report.ImplNames,
			Ratio: report.LispOverGoFactor,
		},
		report.PivotTable{
			Title: "Server RSS per connection (RSS over the connections, starting heap included)", GroupBy: []string{"rpc", "clients"},
			Rows: "total_conns", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricServerRSSPerConn, Names: report.ImplNames,
		},
		report.PivotTable{
			Title: "Connections the server held (its sockets after each repetition)", GroupBy: []string{"rpc", "clients"},
			Rows: "total_conns", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricServerConnsHeld, Names: report.ImplNames,
		},
		report.PivotTable{
			Title: "Server CPU per request", GroupBy: []string{"rpc", "clients"},
			Rows: "total_conns", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricServerCPUPerOp, Names: report.ImplNames,
			Ratio: report.LispOverGoFactor,
		},
		report.PivotTable{
			Title: report.LiveHeapTitle, GroupBy: []string{"rpc", "clients"},
			Rows: "total_conns", Cols: "impl", ColOrder: everyServer,
			Metric: schema.MetricServerLiveHeap, Names: report.ImplNames,
		},
		// Throughput and latency are judged only where the servers set the figures (a saturated
		// closed-loop client adds its own queueing to every latency); memory is the server's
		// whatever the load generator's state.
		report.Goal{
			Title: "Goal: throughput and latency",
			Statement: "At every connection count, the Lisp server reaches at least the Go server's " +
				"req/s and a p99 latency no higher than Go's. Req/s is judged when both servers " +
				"were its bottleneck (at least 85% of their CPUs busy, the load generator less), or when the verdict holds " +
				"anyway, over the headroom each server had left. Latency is judged only in an open loop " +
				"below both servers' capacity: in this closed loop it is shown, not decided.",
			Point:    connScalePoint,
			GroupBy:  []string{"rpc", "clients", "total_conns"},
			Cells:    map[string][]string{"total_conns": {"100", "1000", "10000"}},
			Vary:     []string{"impl"},
			Baseline: "go",
			Config:   map[string]string{"impl": "lisp"}, // the tuned server is shown, not judged
			Names:    report.ImplNames,
			Limits: []report.RatioLimit{
				{Metric: schema.MetricReqPerSec, Min: 1},
				{Metric: schema.MetricLatencyP99, Max: 1},
			},
			Bottleneck: "bottleneck",
			Context: report.Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation,
				schema.MetricServerCPUPerOp, schema.MetricCPUPressure),
		},
		report.Goal{
			Title: "Goal: memory",
			Statement: "At every connection count, what one more connection costs the Lisp " +
				"server in memory (its anonymous RSS grown from before the cell's connections " +
				"opened to once they settled, before any call, per connection; each cell on a " +
				"freshly started server) is at most 2x what it costs the Go server.",
			Point:    connScalePoint,
			GroupBy:  []string{"rpc", "clients", "total_conns"},
			Cells:    map[string][]string{"total_conns": {"100", "1000", "10000"}},
			Vary:     []string{"impl"},
			Baseline: "go",
			Config:   map[string]string{"impl": "lisp"},
			Names:    report.ImplNames,
			Limits:   []report.RatioLimit{{Metric: schema.MetricServerMarginalRSSPerConn, Max: 2}},
			Context:  report.Metrics(schema.MetricServerRSSPerConn, schema.MetricServerConnsHeld, schema.MetricCPUPressure),
		},
	},
}

// RouteGuide over TLS (the load generator's -tls): the "routeguide"
// parameters, the Go load generator only.
var routeguideTLSLayout = report.Layout{
	Title: "RouteGuide over TLS: Go vs Common Lisp",
	Sections: []report.Section{
		lispGoPivot("Throughput", []string{"rpc", "client"}, "clients", schema.MetricReqPerSec, report.LispOverGoPercent),
		lispGoPivot("Server CPU per request", []string{"rpc", "client"}, "clients", schema.MetricServerCPUPerOp, report.LispOverGoFactor),
		lispGoPivot("Latency", []string{"rpc", "client"}, "clients", schema.MetricLatencyP99, nil),
		tlsCPUGoal([]string{"rpc", "clients"}, routeguideCells, "the cells' clients over TLS, each with "+
			"a connection of its own, calling in a closed loop; each server pinned to half of the CPUs "+
			"(one on 2 cores), the load generator to the rest; handlers that take microseconds"),
	},
}

// Connection scale over TLS: the "connscale" parameters.
var connScaleTLSLayout = report.Layout{
	Title: "Connection scale over TLS: Go vs Common Lisp",
	Sections: []report.Section{
		lispGoPivot("Throughput", []string{"rpc", "clients"}, "total_conns", schema.MetricReqPerSec, report.LispOverGoPercent),
		lispGoPivot("Server CPU per request", []string{"rpc", "clients"}, "total_conns", schema.MetricServerCPUPerOp, report.LispOverGoFactor),
		lispGoPivot("Server marginal RSS per connection (anonymous RSS grown per connection opened, before any call)", []string{"rpc", "clients"}, "total_conns", schema.MetricServerMarginalRSSPerConn, report.LispOverGoFactor),
		lispGoPivot("Latency p99", []string{"rpc", "clients"}, "total_conns", schema.MetricLatencyP99, nil),
		tlsCPUGoal([]string{"rpc", "clients", "total_conns"}, map[string][]string{"total_conns": {"1000"}},
			"1,000 TLS connections open to each server, 100 of them calling unary RouteGuide methods in a "+
				"closed loop and 900 idle (handshake, preface and SETTINGS done); each server pinned to "+
				"half of the CPUs (one on 2 cores), the load generator to the rest"),
	},
}

// clientNames head the columns of client comparisons ("Go client (req/s)").
var clientNames = map[string]string{"go": "Go client", "lisp": "Lisp client"}

// openLoopLatency is one latency percentile of the open-loop suite, Go and
// Lisp servers side by side at the same offered rate and load generator.
func openLoopLatency(metric string) report.PivotTable {
	return report.PivotTable{
		Title: report.MetricLabel(metric), GroupBy: []string{"rpc", "client", "clients"},
		Rows: "rate", Cols: "impl", ColOrder: []string{"go", "lisp"},
		Metric: metric, Names: report.ImplNames,
		Ratio: report.LispOverGoFactor,
	}
}

// tlsCPUGoal judges the Lisp server's CPU per request over TLS against the
// Go server's, with the same Go load generator, in every cell named, at the
// operating point named.
func tlsCPUGoal(groupBy []string, cells map[string][]string, point string) report.Goal {
	return report.Goal{
		Title: "Goal: CPU per request over TLS",
		Statement: "With the same Go load generator over TLS, the Lisp server spends at most the Go " +
			"server's CPU per request (user and system time of the server process over the requests " +
			"it completed) in every cell.",
		Point:    point,
		Where:    map[string]string{"client": "go"},
		GroupBy:  groupBy,
		Cells:    cells,
		Vary:     []string{"impl"},
		Baseline: "go",
		Config:   map[string]string{"impl": "lisp"},
		Names:    report.ImplNames,
		Limits:   []report.RatioLimit{{Metric: schema.MetricServerCPUPerOp, Max: 1}},
		Context: report.Metrics(schema.MetricReqPerSec, schema.MetricServerUtilisation, schema.MetricClientUtilisation,
			schema.MetricCPUPressure),
	}
}

// lispGoPivot is a table of one metric with the Go and the Lisp server side
// by side (and the tuned servers after them, where measured), rows by a
// parameter, and their ratio if any.
func lispGoPivot(title string, groupBy []string, rows, metric string, ratio *report.PivotRatio) report.PivotTable {
	return report.PivotTable{
		Title: title, GroupBy: groupBy,
		Rows: rows, Cols: "impl", ColOrder: []string{"go", "lisp"},
		Metric: metric, Names: report.ImplNames, Ratio: ratio,
	}
}

// routeguideSpeedGoal is the uncapped grid's goal, judged at the defaults
// and, with tunedPair, between the tuned servers.
var routeguideSpeedGoal = lispVersusGoGoal("Speed goal",
	"With the same Go load generator, the Lisp server reaches at least "+
		"0.5x the Go server's req/s for every RPC kind at 1, 10 and 100 clients. A cell is "+
		"judged when both servers were its bottleneck (at least 85% of their CPUs busy, "+
		"the load generator less), or when the verdict holds anyway (a Lisp server at its "+
		"capacity below the goal, or a Go server at its capacity that the Lisp figure "+
		"already meets). A figure that a saturated load generator set, or one that neither "+
		"side was pushed to (one client's round trips), says nothing about the servers' capacity. "+
		"The bound must hold over the headroom each server had left (its figure over its share "+
		"of CPU busy).", gridPoint,
	report.RatioLimit{Metric: schema.MetricReqPerSec, Min: 0.5}, "bottleneck",
	report.Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation,
		schema.MetricServerCPUPerOp, schema.MetricCPUPressure))
