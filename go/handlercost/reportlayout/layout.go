// Package reportlayout lays out the handler-cost suites' results
// (go/handlercost/loadgen) in the benchmark report, and states their goals:
// "handlercost", each server on CPUs of its own, and
// "handlercost_shared_cpus", the servers and the load generator sharing
// every CPU. It registers them with go/bench/report when linked in.
package reportlayout

import (
	"maps"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// handlerNames name the handler-cost suite's handlers, and its servers.
var handlerNames = func() map[string]string {
	names := map[string]string{
		"fast":                     "Fast",
		"spin_200us":               "Spin 200 µs",
		"sleep_2ms":                "Sleep 2 ms",
		"sleep_100ms_1000_callers": "Sleep 100 ms, 1,000 callers",
		"longpoll":                 "Fast, beside long polls",
	}
	maps.Copy(names, report.ImplNames)
	return names
}()

// handlerCostCells are the cells the suite's goal names in advance.
var handlerCostCells = map[string][]string{
	"handler": {"fast", "spin_200us", "sleep_2ms", "sleep_100ms_1000_callers", "longpoll"},
	"conns":   {"4", "1"},
}

// handlerCostPivot is one metric of the handler-cost grid: handlers down,
// the Go and the Lisp server across, a table per connection count.
func handlerCostPivot(title, metric string, ratio *report.PivotRatio) report.PivotTable {
	return report.PivotTable{
		Title: title, GroupBy: []string{"conns"},
		Rows: "handler", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
		Metric: metric, Names: handlerNames, Ratio: ratio,
	}
}

// handlerCostTotal is a count of the grid summed over the repetitions.
func handlerCostTotal(title, metric string) report.PivotTable {
	t := handlerCostPivot(title, metric, nil)
	t.Total = true
	return t
}

// operatingPoint is where a suite's servers and load generator run, and
// what its sizes measure, as its goals state them.
type operatingPoint struct {
	placement string
	// polls says how many long polls there are and how long they sleep.
	polls string
	// tuned says which cells the tuned servers are measured on.
	tuned string
}

// The operating points of the two suites: the servers pinned, and sharing
// every CPU with the load generator.
var (
	pinned = operatingPoint{
		placement: "each server pinned to half of the CPUs (one on 2 cores), the load generator to the rest",
		polls:     "40 in the quick size, each sleeping 2 s; 20 s in the full size",
		tuned: "the quick size measures the tuned servers on these only, for time: the long-poll mix's " +
			"Fast calls, where both act too, are left out of it; the full size measures every cell, " +
			"which the tables show",
	}
	sharedCPUs = operatingPoint{
		placement: "each server on every CPU (both on 2 cores), which the load generator shares " +
			"(-cpus off): a server may use more than one CPU, but not without the load generator " +
			"beside it",
		polls: "40, each sleeping 2 s",
		tuned: "measured on these only, for time: the long-poll mix's Fast calls, where both act too, " +
			"are left out",
	}
)

// handlerCostLayout renders a handler-cost suite (go/handlercost/loadgen,
// bench/handlercost) measured at point: the Go and the Lisp server, in
// turns, with handlers that answer at once, spin on a CPU or sleep, and
// cheap calls beside long polls. Parameters: impl, client, handler, conns,
// callers, and in the long-poll mix polls and poll.
func handlerCostLayout(title string, point operatingPoint) report.Layout {
	return report.Layout{
		Title: title,
		Sections: []report.Section{
			handlerCostPivot("Throughput (calls/s)", schema.MetricReqPerSec, report.LispOverGoPercent),
			handlerCostPivot("Latency p50", schema.MetricLatencyP50, report.LispOverGoFactor),
			handlerCostPivot("Latency p99", schema.MetricLatencyP99, report.LispOverGoFactor),
			handlerCostPivot("Server CPU per call", schema.MetricServerCPUPerOp, report.LispOverGoFactor),
			handlerCostPivot("Client CPU per call", schema.MetricClientCPUPerOp, report.LispOverGoFactor),
			// The servers serve every cell in turn, so what they hold after a
			// repetition includes what earlier cells made them grow to.
			handlerCostPivot("Server RSS (after each repetition; the servers serve every cell, so it includes what earlier cells grew them to)", schema.MetricServerRSS, report.LispOverGoFactor),
			handlerCostPivot(report.LiveHeapTitle, schema.MetricServerLiveHeap, nil),
			handlerCostPivot("Server threads (after each repetition; as RSS, after every cell before)", schema.MetricServerThreads, nil),
			handlerCostPivot(report.ServerParallelismTitle, schema.MetricServerParallelism, nil),
			handlerCostTotal("Failed calls, all repetitions", schema.MetricErrors),
			handlerCostTotal("Long polls completed, all repetitions", schema.MetricPolls),
			handlerCostTotal("Long polls failed, all repetitions", schema.MetricPollErrors),
			callsGoal(point),
			tunedCallsGoal(point),

			longPollGoal(point),
		},
	}
}

// longPollGoal judges the long-poll mix on absolute limits: cheap calls
// must neither fail nor wait behind the polls.
func longPollGoal(point operatingPoint) report.BoundGoal {
	return report.BoundGoal{
		Title: "Goal: cheap calls beside long polls",
		Statement: "While long polls (Sleep calls of many seconds) are held open on the same " +
			"connections, no cheap call fails and their latency p99 stays under 10 ms, on each " +
			"server and at each connection count.",
		Point: "long polls held open (" + point.polls + "), and 4 callers of Fast (-poll_callers) " +
			"calling in a closed loop beside them, all over 4 connections or over 1; " + point.placement,
		Where: map[string]string{"handler": "longpoll"},
		Label: []string{"impl", "conns"},
		Names: report.ImplNames,
		Bounds: []report.Bound{
			{Metric: schema.MetricErrors, Below: 1, Total: true},
			{Metric: schema.MetricLatencyP99, Below: 10e6},
		},
		Context: report.Metrics(schema.MetricReqPerSec),
		Totals:  []string{schema.MetricPolls, schema.MetricPollErrors},
	}
}

// callsGoal is the suite's goal between the servers at their defaults; it
// is judged between the tuned ones too (tunedCallsGoal,
// bench/handlercost/BUILD.bazel's TUNED): tuned against tuned, as defaults
// against defaults.
func callsGoal(point operatingPoint) report.Goal {
	return callsGoalBetween("Goal: calls/s and p99", "the Lisp server at clgrpc's defaults",
		"the Go server's", "every cell: each handler over 4 connections and over 1, with 64 callers "+
			"(1,000 for Sleep 100 ms, so that the server holds that many blocked calls), and the cheap "+
			"calls beside long polls", handlerCostCells, "go", "lisp", point.placement)
}

// tunedCallsGoal is the goal between the tuned servers.
func tunedCallsGoal(point operatingPoint) report.Goal {
	return callsGoalBetween("Goal: calls/s and p99, both servers tuned",
		"the Lisp server tuned (Fast declared :inline, run on the reactor that read it)",
		"the tuned Go server's (4 stream workers, grpc.NumStreamWorkers, 64 KiB read and write buffers, "+
			"grpc.SharedWriteBuffer, and GOGC=400)",
		"every cell of Fast, where both tunings act, over 4 connections and over 1, with 64 callers "+
			"("+point.tuned+")", tunedCells, "go_tuned", "lisp_tuned", point.placement)
}

// tunedCells are the cells the tuned goal names: Fast, where clgrpc's
// tuning (Fast :inline) and grpc-go's both act (as they do in the
// long-poll mix, which the quick size leaves out for time).
var tunedCells = map[string][]string{
	"handler": {"fast"},
	"conns":   {"4", "1"},
}

// callsGoalBetween is the goal on calls/s and p99 of the server labelled
// config, described as lisp, against baseline's, described as golang, in
// the cells named, described as where, with the servers where placement
// says.
func callsGoalBetween(title, lisp, golang, where string, cells map[string][]string, baseline, config, placement string) report.Goal {
	return report.Goal{
		Title: title,
		Point: "callers in a closed loop (64; 1,000 for Sleep 100 ms; 4 calling Fast beside the long " +
			"polls), each call's handler answering at once (Fast), computing (Spin) or waiting " +
			"(Sleep) for the time its cell names, over 4 connections or over 1; " + placement,
		Statement: "With the same Go load generator, " + lisp + " reaches at least " + golang + " calls/s " +
			"and at most 1.5x its latency p99 in " + where + "; the server sized to the CPUs its table " +
			"above names. Every cell is judged whatever its bottleneck (a Sleep cell is bound by neither " +
			"side's CPU); the utilisations say which side set the figures.",
		GroupBy:  []string{"handler", "conns"},
		Cells:    cells,
		Vary:     []string{"impl"},
		Baseline: baseline,
		Config:   map[string]string{"impl": config},
		Names:    report.ImplNames,
		Limits: []report.RatioLimit{
			{Metric: schema.MetricReqPerSec, Min: 1},
			{Metric: schema.MetricLatencyP99, Max: 1.5},
		},
		Context: report.Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation, schema.MetricCPUPressure),
	}
}
