package reportlayout

import (
	"fmt"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// quotaCells are the cells the quota sweep's goals name in advance: gRPC's
// two unconstrained scenarios with empty messages, each client worker
// (grpc-go's and the Lisp one), and both server workers held to a quarter,
// a half and a whole core, at the 10 ms period and at the kernel's 100 ms.
// A whole core does not bind a server pinned to one CPU (as on 2 cores):
// that point shows what CFS accounting costs, and its cells are judged
// only where both servers limited them. The uncapped point, where
// measured, is shown beside them; the qps suite judges it.
var quotaCells = map[string][]string{
	"scenario":          {"unary_qps_unconstrained", "streaming_qps_unconstrained"},
	"payload":           {"0"},
	"client":            {"go", "lisp"},
	"server_cpu_quota":  {"0.25", "0.5", "1"},
	"server_cpu_period": {"10ms", "100ms"},
}

// quotaPoint names the operating point the sweep's goals are judged at.
var quotaPoint = fmt.Sprintf("%s with empty messages, as gRPC's scenario configurations define them "+
	"(16 channels of 16 calls in flight, a closed loop), each client worker (grpc-go's and the Lisp "+
	"one) with the driver on the load generator's CPUs; each server worker pinned to the server's "+
	"half of the physical cores (one CPU on 2 cores) and held to %s of a core at CFS periods of %s, "+
	"each point on workers started afresh, born in their control groups, the two started in turns",
	strings.Join(quotaCells["scenario"], " and "), strings.Join(quotaCells["server_cpu_quota"], ", "),
	strings.Join(quotaCells["server_cpu_period"], " and "))

// quotaKeys group the sweep's tables: a table per scenario, payload,
// client and period, a row per quota.
var quotaKeys = []string{"scenario", "payload", "client", "server_cpu_period"}

// quotaGoal is a goal judged in every capped cell the sweep names.
func quotaGoal(title, statement string, limit report.RatioLimit, bottleneck string, context []report.MetricView) report.Goal {
	return report.Goal{
		Title: title, Statement: statement, Point: quotaPoint,
		GroupBy: []string{"scenario", "payload", "client", "server_cpu_quota", "server_cpu_period"},
		Cells:   quotaCells, In: quotaCells,
		Vary: []string{"server"}, Baseline: "go", Config: map[string]string{"server": "lisp"},
		Names: report.ImplNames, Limits: []report.RatioLimit{limit},
		Bottleneck: bottleneck, Context: context,
	}
}

// quotaPivot is one metric of the sweep: quotas down, the Go and the Lisp
// server across, and their ratio if any.
func quotaPivot(title, metric string, ratio *report.PivotRatio) report.PivotTable {
	return report.PivotTable{
		Title: title, GroupBy: quotaKeys,
		Rows: "server_cpu_quota", Cols: "server", ColOrder: []string{"go", "lisp"},
		Metric: metric, Names: report.ImplNames, Ratio: ratio,
	}
}

// quotaLayout renders gRPC's scenarios with the server workers held to CPU
// quotas (go/qps/bench -server_cpu_quota): how the comparison moves with
// the CPU a server is given, where a whole core leaves the client the
// bottleneck. Parameters: those of "qps", and server_cpu_quota (cores, 0
// uncapped) and server_cpu_period ("none" uncapped).
var quotaLayout = report.Layout{
	Title: "gRPC's benchmark scenarios across CPU quotas, through the qps workers",
	Sections: []report.Section{
		report.SweepGeoMean{
			Title:     "The sweep at a glance",
			Statement: report.QuotaSweepStatement(quotaPoint, "QPS"),
			Cells:     quotaCells,
			Vary:      []string{"server"}, Baseline: "go", Config: map[string]string{"server": "lisp"},
			Names:      report.ImplNames,
			Metrics:    []string{schema.MetricReqPerSec, schema.MetricServerCPUPerOp, schema.MetricServerRSS},
			Bottleneck: "bottleneck",
			Capacity:   []string{schema.MetricReqPerSec},
		},
		quotaPivot("QPS", schema.MetricReqPerSec, report.LispOverGoPercent),
		quotaPivot("Server CPU per call", schema.MetricServerCPUPerOp, report.LispOverGoFactor),
		quotaPivot("Server utilisation (CPU time over wall time and the quota)", schema.MetricServerUtilisation, nil),
		quotaPivot("Client utilisation (CPU time over wall time and the client's cores)", schema.MetricClientUtilisation, nil),
		quotaPivot("Time throttled by the quota (share of the CFS periods of the measured interval)", schema.MetricServerThrottled, nil),
		quotaPivot("Latency p99", schema.MetricLatencyP99, nil),
		quotaPivot("Server worker RSS (after each repetition; it serves every scenario of its cap)", schema.MetricServerRSS, report.LispOverGoFactor),
		quotaGoal("Speed goal at every quota",
			"With the same client worker on the load generator's CPUs and each server worker held to the "+
				"same CPU quota, the Lisp server reaches at least the Go server's QPS. A cell is judged "+
				"when both servers were its bottleneck, over the headroom each had left.",
			report.RatioLimit{Metric: schema.MetricReqPerSec, Min: 1}, "bottleneck",
			report.Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation,
				schema.MetricServerThrottled, schema.MetricServerCPUPerOp)),
		quotaGoal("Goal: at or under Go's CPU per call at every quota",
			"With the same client worker and each server worker held to the same CPU quota, "+
				"the Lisp server spends at most the Go server's CPU per call.",
			report.RatioLimit{Metric: schema.MetricServerCPUPerOp, Max: 1}, "",
			report.Metrics(schema.MetricReqPerSec, schema.MetricServerUtilisation, schema.MetricServerRSS,
				schema.MetricServerThrottled)),
	},
}
