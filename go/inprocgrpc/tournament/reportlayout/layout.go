// Package reportlayout lays out the in-process channel tournament's results
// (the "tournament" suite) in the benchmark report, and states its goals: it
// registers them with go/bench/report when linked in.
package reportlayout

import (
	"strconv"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// In-process channel tournament. Parameters: workload (unary,
// server_stream, bidi, ...), competitor, and where they vary, payload
// and goroutines. The first competitor of each table is the baseline.
var tournamentLayout = report.Layout{
	Title: "In-process gRPC channel tournament",
	Sections: []report.Section{
		report.ScenarioTable{
			Title:     "Throughput",
			GroupBy:   []string{"workload", "payload", "goroutines"},
			RowParams: []string{"competitor"},
			// Client and server share one process here, so its CPU per
			// operation counts both, spinning receivers included.
			Metrics: report.Metrics(schema.MetricOps, schema.MetricNsPerOp, schema.MetricClientCPUPerOp, schema.MetricBytesPerOp, schema.MetricAllocsPerOp),
			Ratio:   &report.Ratio{Metric: schema.MetricNsPerOp},
		},
		report.ScenarioTable{
			Title:     "Latency percentiles",
			GroupBy:   []string{"workload", "payload", "goroutines"},
			RowParams: []string{"competitor"},
			Metrics:   report.Metrics(schema.MetricLatencyP50, schema.MetricLatencyP90, schema.MetricLatencyP95, schema.MetricLatencyP99),
		},
		// What a large call copying its messages costs, beside what
		// the two copies alone cost (copy-floor) and what generated
		// copy code saves over proto.Merge (ours-merge).
		report.ScenarioTable{
			Title: "Copying large messages",
			Where: map[string]string{"workload": "unary"},
			In: map[string][]string{
				"payload":    {"102400", "1048576"},
				"competitor": {"grpchan", "ours", "ours-detached", "ours-merge", "copy-floor"},
			},
			GroupBy:   []string{"payload"},
			RowParams: []string{"competitor"},
			Metrics:   report.Metrics(schema.MetricNsPerOp, schema.MetricLatencyP99, schema.MetricBytesPerOp, schema.MetricAllocsPerOp),
			Ratio:     &report.Ratio{Metric: schema.MetricNsPerOp},
		},
		// Copying, both channels make the same two copies of each
		// message, which at these sizes are most of a call.
		largeUnaryGoal("ours", "handlers on the caller's goroutine", "grpchan", 0.8),
		largeUnaryGoal("ours-detached", "handlers on their own goroutine, the caller free to leave at its deadline, as grpchan's", "grpchan", 0.8),
		// Judged by the same test: where the two copies alone take more
		// than the goals' limit, no channel that makes them can meet it.
		copyFloorBound(0.8),
		// With the opt-in contract that nobody changes a unary message
		// once sent, each channel is judged against grpchan given the
		// same contract, not against one that still copies.
		largeUnaryGoal("ours-shared", "WithSharedUnaryMessages, handlers on the caller's goroutine", "grpchan-shared", 0.5),
		largeUnaryGoal("ours-detached-shared", "WithSharedUnaryMessages and WithDetachedUnary", "grpchan-shared", 0.5),
	},
}

// largeUnaryGoal is the in-process channel's goal for large messages, for
// one of its modes: at most limit times the baseline's ns/op at 100 KiB and
// 1 MiB, with a p99 no worse.
func largeUnaryGoal(competitor, mode, baseline string, limit float64) report.Goal {
	g := largeUnaryCells(competitor, baseline)
	g.Title = "Speed goal: large unary, " + competitor
	g.Statement = "At 100 KiB and 1 MiB, " + competitor + " (" + mode + ") takes at most " + formatLimit(limit) + "x " +
		baseline + "'s ns/op, with a latency p99 no higher than " + baseline + "'s."
	g.Limits = []report.RatioLimit{{Metric: schema.MetricNsPerOp, Max: limit}, {Metric: schema.MetricLatencyP99, Max: 1}}
	return g
}

// copyFloorBound judges the copying goals' reach: copy-floor makes the
// same two copies of each message as both channels, and nothing else, so a
// copying channel can take at most limit times grpchan's ns/op only if
// copy-floor does.
func copyFloorBound(limit float64) report.Goal {
	g := largeUnaryCells("copy-floor", "grpchan")
	g.Title = "Bound: the two copies alone, against grpchan"
	g.Statement = "At 100 KiB and 1 MiB, copy-floor (the copies of the request and of the response that both channels make, with no channel) takes at most " +
		formatLimit(limit) + "x grpchan's ns/op. Where it does not, no channel that makes those copies meets the " +
		formatLimit(limit) + "x copying goals above: \"not met\" here is that bound, measured."
	g.Limits = []report.RatioLimit{{Metric: schema.MetricNsPerOp, Max: limit}}
	return g
}

// largeUnaryCells are the cells the large-message goals name: competitor
// against baseline in unary calls of 100 KiB and 1 MiB.
func largeUnaryCells(competitor, baseline string) report.Goal {
	return report.Goal{
		Where:    map[string]string{"workload": "unary"},
		In:       map[string][]string{"payload": {"102400", "1048576"}},
		Cells:    map[string][]string{"payload": {"102400", "1048576"}},
		GroupBy:  []string{"payload"},
		Vary:     []string{"competitor"},
		Baseline: baseline,
		Config:   map[string]string{"competitor": competitor},
		Point: "one goroutine making unary calls of the size its cell names, one after another, " +
			"client and server in one process at the machine's GOMAXPROCS",
		Context: []report.MetricView{{Name: schema.MetricBytesPerOp}, {Name: schema.MetricCPUPressure}},
	}
}

func formatLimit(limit float64) string { return strconv.FormatFloat(limit, 'g', -1, 64) }
