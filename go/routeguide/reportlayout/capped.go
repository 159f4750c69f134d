package reportlayout

import (
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// lispVersusGoGoal is a goal on the RouteGuide grid: the Lisp server at its
// defaults against the Go server, both driven by the Go load generator, in
// every cell named in advance (routeguideCells), on one limit, judged at
// the operating point named; bottleneck, if not empty, names the parameter
// that says which side set each cell.
func lispVersusGoGoal(title, statement, point string, limit report.RatioLimit, bottleneck string, context []report.MetricView) report.Goal {
	return report.Goal{
		Title:     title,
		Point:     point,
		Statement: statement + " " + defaultsPoint,
		Where:     map[string]string{"client": "go"},
		GroupBy:   []string{"rpc", "clients"},
		Cells:     routeguideCells,
		Vary:      []string{"impl"},
		Baseline:  "go",
		// Both servers at their defaults: the tuned servers are judged
		// against each other (tunedPair), never against these.
		Config:     map[string]string{"impl": "lisp"},
		Names:      report.ImplNames,
		Limits:     []report.RatioLimit{limit},
		Bottleneck: bottleneck,
		Context:    context,
	}
}

// defaultsPoint ends the statement of a goal judged between the servers'
// defaults; tunedPoint that of one judged between the tuned servers (TUNED
// in bench/routeguide/matrix.bzl).
const (
	defaultsPoint = "Both servers at their defaults."
	tunedPoint    = "Both servers tuned: the Go server with 4 stream workers (grpc.NumStreamWorkers), " +
		"64 KiB read and write buffers, the write buffer given back after each flush " +
		"(grpc.SharedWriteBuffer), and a collector target of 400% (-gc_percent, as GOGC=400: a heap " +
		"up to five times what is live), the Lisp server with GetFeature run on its reactor " +
		"(-unary_inline)."
)

// tunedPair is goal g judged between the tuned servers instead of the
// defaults: tuned against tuned, as defaults against defaults, so that
// neither side's tuning is weighed against the other's defaults.
func tunedPair(g report.Goal) report.Goal {
	g.Title += ", both servers tuned"
	g.Statement = strings.TrimSuffix(g.Statement, defaultsPoint) + tunedPoint
	g.Baseline = "go_tuned"
	g.Config = map[string]string{"impl": "lisp_tuned"}
	return g
}

// The operating points of the RouteGuide grids' goals: what the cells
// named hold fixed.
const (
	// gridPoint is the uncapped grid's.
	gridPoint = "each client with an HTTP/2 connection of its own, calling in a closed loop; " +
		"each server pinned to half of the CPUs (one on 2 cores), with no quota, and the load " +
		"generator to the rest; handlers that take microseconds (RouteGuide's lookups in memory)"
	// cappedPoint is the capped grid's.
	cappedPoint = "each client with an HTTP/2 connection of its own, calling in a closed loop; " +
		"each server held to the CPU quota its tables name (a quarter of a core in //bench:all) " +
		"at a 10 ms CFS period, the load generator pinned to the other half of the CPUs (a whole " +
		"core on 2); handlers that take microseconds"
)

// routeguideCells are the RouteGuide grid's cells, named in advance: every
// RPC kind at 1, 10 and 100 clients.
var routeguideCells = map[string][]string{
	"rpc":     {"unary", "server_streaming", "client_streaming", "bidi_streaming"},
	"clients": {"1", "10", "100"},
}

// cappedLayout renders the RouteGuide grid measured with each server held
// to a CPU quota below the load generator's core (the load generator's
// -server_cpu_quota): the servers, not the load generator, then set the
// figures, and the goals can be judged in cells where the uncapped grid's
// saturated load generator leaves them undecided. A throttled server
// stalls until its next period, which shows in every latency, so the
// layout judges throughput and CPU per request only and shows no latency.
// Parameters: those of "routeguide", and server_cpu_quota (cores).
var cappedLayout = report.Layout{
	Title: "RouteGuide with the servers capped below a core: Go vs Common Lisp",
	Sections: []report.Section{
		lispGoPivot("Throughput", []string{"rpc", "client", "server_cpu_quota"}, "clients", schema.MetricReqPerSec, report.LispOverGoPercent),
		lispGoPivot("Server CPU per request", []string{"rpc", "client", "server_cpu_quota"}, "clients", schema.MetricServerCPUPerOp, report.LispOverGoFactor),
		lispGoPivot("Server RSS (after each repetition)", []string{"rpc", "client", "server_cpu_quota"}, "clients", schema.MetricServerRSS, report.LispOverGoFactor),
		lispGoPivot(report.LiveHeapTitle, []string{"rpc", "client", "server_cpu_quota"}, "clients", schema.MetricServerLiveHeap, nil),
		lispGoPivot("Server threads (after each repetition)", []string{"rpc", "client", "server_cpu_quota"}, "clients", schema.MetricServerThreads, nil),
		lispGoPivot(report.ServerParallelismTitle, []string{"rpc", "client", "server_cpu_quota"}, "clients", schema.MetricServerParallelism, nil),
		lispGoPivot("Server utilisation (CPU time over wall time and the quota)", []string{"rpc", "client", "server_cpu_quota"}, "clients", schema.MetricServerUtilisation, nil),
		lispGoPivot("Load generator utilisation (its core)", []string{"rpc", "client", "server_cpu_quota"}, "clients", schema.MetricClientUtilisation, nil),
		lispVersusGoGoal("Speed goal, servers capped",
			"With the same Go load generator on a whole core and each server held to the same "+
				"CPU quota, the Lisp server reaches at least 0.5x the Go server's req/s for every RPC "+
				"kind at 1, 10 and 100 clients. A cell is judged when both servers were its bottleneck "+
				"(at least 85% of their quota busy, the load generator less), or when the verdict "+
				"holds anyway, over the headroom each server had left (its figure over its share of "+
				"the quota busy).", cappedPoint,
			report.RatioLimit{Metric: schema.MetricReqPerSec, Min: 0.5}, "bottleneck",
			report.Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation,
				schema.MetricServerThrottled, schema.MetricServerCPUPerOp)),
		lispVersusGoGoal("Goal: at or under Go's CPU per request, servers capped",
			"With the same Go load generator and each server held to the same CPU quota, the "+
				"Lisp server spends at most the Go server's CPU per request (user and system time of "+
				"the server process over the requests it completed) in every cell.", cappedPoint,
			report.RatioLimit{Metric: schema.MetricServerCPUPerOp, Max: 1}, "",
			report.Metrics(schema.MetricReqPerSec, schema.MetricServerUtilisation,
				schema.MetricClientUtilisation, schema.MetricServerThrottled)),
	},
}
