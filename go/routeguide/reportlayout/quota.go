package reportlayout

import (
	"fmt"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// quotaSweepCells are the quota sweep's capped cells, named in advance:
// unary calls from 10 clients (the Go load generator), each server held to
// a quarter, a half and a whole core, at the 10 ms period the capped grid
// uses and at the kernel's 100 ms. A whole core does not bind a server
// pinned to one CPU: that point shows what CFS accounting costs. The
// uncapped point is shown beside them and judged in the uncapped grid.
// The full sweep's other RPC kinds and client counts are shown, not
// judged.
var quotaSweepCells = map[string][]string{
	"rpc":               {"unary"},
	"clients":           {"10"},
	"server_cpu_quota":  {"0.25", "0.5", "1"},
	"server_cpu_period": {"10ms", "100ms"},
}

// quotaSweepPoint names the operating point every goal of the sweep is
// judged at.
var quotaSweepPoint = fmt.Sprintf("unary calls from %s Go clients, one connection each, with each server "+
	"held to %s of a core at CFS periods of %s (each point on servers started afresh, born in their "+
	"control groups)", strings.Join(quotaSweepCells["clients"], " and "),
	strings.Join(quotaSweepCells["server_cpu_quota"], ", "), strings.Join(quotaSweepCells["server_cpu_period"], " and "))

// quotaSweepKeys group the sweep's tables: a table per RPC, client count
// and period, a row per quota.
var quotaSweepKeys = []string{"rpc", "client", "clients", "server_cpu_period"}

// quotaSweepGoal is a goal judged in every capped cell of the sweep, and
// only there.
func quotaSweepGoal(title, statement string, limit report.RatioLimit, bottleneck string, context []report.MetricView) report.Goal {
	g := lispVersusGoGoal(title, statement, quotaSweepPoint, limit, bottleneck, context)
	g.GroupBy = []string{"rpc", "clients", "server_cpu_quota", "server_cpu_period"}
	g.Cells, g.In = quotaSweepCells, quotaSweepCells
	return g
}

// quotaSweepLayout renders the RouteGuide grid swept over CPU quotas (the
// load generator's -server_cpu_quota with several caps and
// -server_cpu_period): how the comparison moves with the CPU a server is
// given, and with how the kernel hands it out. Parameters: those of
// "routeguide_capped", and server_cpu_period ("none" for the uncapped
// point, whose server_cpu_quota is 0).
var quotaSweepLayout = report.Layout{
	Title: "RouteGuide across CPU quotas: Go vs Common Lisp",
	Sections: []report.Section{
		report.SweepGeoMean{
			Title:     "The sweep at a glance",
			Statement: report.QuotaSweepStatement(quotaSweepPoint, "Req/s"),
			Where:     map[string]string{"client": "go"},
			Cells:     quotaSweepCells,
			Vary:      []string{"impl"}, Baseline: "go", Config: map[string]string{"impl": "lisp"},
			Names:      report.ImplNames,
			Metrics:    []string{schema.MetricReqPerSec, schema.MetricServerCPUPerOp, schema.MetricServerRSS},
			Bottleneck: "bottleneck",
			Capacity:   []string{schema.MetricReqPerSec},
		},
		lispGoPivot("Throughput", quotaSweepKeys, "server_cpu_quota", schema.MetricReqPerSec, report.LispOverGoPercent),
		lispGoPivot("Server CPU per request", quotaSweepKeys, "server_cpu_quota", schema.MetricServerCPUPerOp, report.LispOverGoFactor),
		lispGoPivot("Server RSS (after each repetition)", quotaSweepKeys, "server_cpu_quota", schema.MetricServerRSS, report.LispOverGoFactor),
		lispGoPivot(report.LiveHeapTitle, quotaSweepKeys, "server_cpu_quota", schema.MetricServerLiveHeap, nil),
		lispGoPivot("Server threads (after each repetition)", quotaSweepKeys, "server_cpu_quota", schema.MetricServerThreads, nil),
		lispGoPivot(report.ServerParallelismTitle, quotaSweepKeys, "server_cpu_quota", schema.MetricServerParallelism, nil),
		lispGoPivot("Time throttled by the quota", quotaSweepKeys, "server_cpu_quota", schema.MetricServerThrottled, nil),
		lispGoPivot("Server utilisation (CPU time over wall time and the quota)", quotaSweepKeys, "server_cpu_quota", schema.MetricServerUtilisation, nil),
		lispGoPivot("Load generator utilisation (its core)", quotaSweepKeys, "server_cpu_quota", schema.MetricClientUtilisation, nil),
		quotaSweepSpeedGoal,
		quotaSweepCPUGoal,
		tunedPair(quotaSweepSpeedGoal),
		tunedPair(quotaSweepCPUGoal),
	},
}

// The sweep's goals, judged at the defaults and, with tunedPair, between
// the tuned servers.
var (
	quotaSweepSpeedGoal = quotaSweepGoal("Speed goal at every quota",
		"With the same Go load generator on a whole core and each server held to the same CPU "+
			"quota, the Lisp server reaches at least the Go server's req/s. A cell is judged when "+
			"both servers were its bottleneck, over the headroom each had left.",
		report.RatioLimit{Metric: schema.MetricReqPerSec, Min: 1}, "bottleneck",
		report.Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation,
			schema.MetricServerThrottled, schema.MetricServerCPUPerOp))
	quotaSweepCPUGoal = quotaSweepGoal("Goal: at or under Go's CPU per request at every quota",
		"With the same Go load generator and each server held to the same CPU quota, the Lisp "+
			"server spends at most the Go server's CPU per request.",
		report.RatioLimit{Metric: schema.MetricServerCPUPerOp, Max: 1}, "",
		report.Metrics(schema.MetricReqPerSec, schema.MetricServerUtilisation, schema.MetricServerRSS,
			schema.MetricServerThrottled))
)
