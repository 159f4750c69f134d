package reportlayout

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// sharedConnCells are the cells of the streams-per-connection grid, named
// in advance: every RPC kind with 100 calls in flight on one HTTP/2
// connection (the Go load generator's -conns shared).
var sharedConnCells = map[string][]string{
	"rpc":     {"unary", "server_streaming", "client_streaming", "bidi_streaming"},
	"clients": {"100"},
}

// sharedConnPoint names the operating point its goals are judged at.
const sharedConnPoint = "100 concurrent calls from the Go load generator, all on one HTTP/2 " +
	"connection, in a closed loop; each server pinned to half of the CPUs (one on 2 cores), the " +
	"load generator to the rest; handlers that take microseconds"

// sharedConnGoal is a goal judged in every cell of the grid.
func sharedConnGoal(title, statement string, limit report.RatioLimit, bottleneck string, context []report.MetricView) report.Goal {
	g := lispVersusGoGoal(title, statement, sharedConnPoint, limit, bottleneck, context)
	g.Cells = sharedConnCells
	return g
}

// sharedConnLayout renders the RouteGuide grid with every client's calls
// multiplexed on one connection (the load generator's -conns shared): the
// operating point where one connection's reader, writer and flow control
// carry every call, which a connection per client never exercises.
// Parameters: those of "routeguide", with conns "shared".
var sharedConnLayout = report.Layout{
	Title: "RouteGuide, many streams on one connection: Go vs Common Lisp",
	Sections: []report.Section{
		lispGoPivot("Throughput", []string{"rpc", "client"}, "clients", schema.MetricReqPerSec, report.LispOverGoPercent),
		lispGoPivot("Server CPU per request", []string{"rpc", "client"}, "clients", schema.MetricServerCPUPerOp, report.LispOverGoFactor),
		lispGoPivot("Latency p99 (closed loop, not judged)", []string{"rpc", "client"}, "clients", schema.MetricLatencyP99, nil),
		lispGoPivot("Server RSS (after each repetition)", []string{"rpc", "client"}, "clients", schema.MetricServerRSS, report.LispOverGoFactor),
		lispGoPivot(report.LiveHeapTitle, []string{"rpc", "client"}, "clients", schema.MetricServerLiveHeap, nil),
		lispGoPivot("Server utilisation", []string{"rpc", "client"}, "clients", schema.MetricServerUtilisation, nil),
		lispGoPivot("Load generator utilisation", []string{"rpc", "client"}, "clients", schema.MetricClientUtilisation, nil),
		sharedConnSpeedGoal,
		sharedConnCPUGoal,
		tunedPair(sharedConnSpeedGoal),
		tunedPair(sharedConnCPUGoal),
	},
}

// The grid's goals, judged at the defaults and, with tunedPair, between the
// tuned servers.
var (
	sharedConnSpeedGoal = sharedConnGoal("Speed goal, one connection",
		"The Lisp server reaches at least the Go server's req/s for every RPC kind. A cell is "+
			"judged when both servers were its bottleneck, over the headroom each had left.",
		report.RatioLimit{Metric: schema.MetricReqPerSec, Min: 1}, "bottleneck",
		report.Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation, schema.MetricServerCPUPerOp))
	sharedConnCPUGoal = sharedConnGoal("Goal: at or under Go's CPU per request, one connection",
		"The Lisp server spends at most the Go server's CPU per request for every RPC kind.",
		report.RatioLimit{Metric: schema.MetricServerCPUPerOp, Max: 1}, "",
		report.Metrics(schema.MetricReqPerSec, schema.MetricServerUtilisation, schema.MetricServerRSS))
)
