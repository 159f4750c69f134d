// Package reportlayout lays out the "cri" suite's results (go/cri/cribench) in
// the benchmark report, and states its goals: it registers them with
// go/bench/report when linked in.
package reportlayout

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// CRI List vs Stream. Parameters: method (list|stream|chunked),
// containers, annotations, per_chunk (chunked only), n, and the
// transport tuning every method of a run shares (window, buffer,
// pool).
var criLayout = report.Layout{
	Title: "CRI gRPC benchmark: List vs Stream",
	Sections: []report.Section{
		report.VariantComparison{
			Title:   "Results",
			GroupBy: []string{"containers", "annotations", "per_chunk", "codec"},
			Variant: "method", Order: []string{"list", "stream", "chunked"},
			Names:   criNames,
			Metrics: criMetrics,
		},
		report.VariantComparison{
			Title:   "Chunk size impact",
			GroupBy: []string{"method", "containers", "annotations", "codec"},
			Variant: "per_chunk",
			Metrics: criMetrics,
		},
		report.AllConfigurations{
			Title:   "Stream vs List (all configurations)",
			GroupBy: []string{"containers", "annotations", "codec"},
			Vary:    []string{"method", "per_chunk"},
			Order:   []string{"list", "stream", "chunked"},
			Names:   criNames,
			Metrics: criMetrics,
		},
		// Each goal judges one configuration, chosen before measuring:
		// the chunked stream at 16 containers per message, and the
		// one-container stream Kubernetes is adopting.
		report.Goal{
			Title: "Speed goal: chunked stream",
			Statement: "At 1024 containers, the chunked stream of 16 containers per message reaches at " +
				"most 0.7x List's latency p50 at no more than List's total CPU (client + server), " +
				"both peers at Go's default GOGC. Streams win latency only where server and client " +
				"run at once, so read the host's CPU pressure next to the ratios: near 100% means " +
				"the peers took turns on busy cores.",
			Point:    criPoint,
			Where:    map[string]string{"containers": "1024"},
			In:       criJudgedCodecs,
			Cells:    map[string][]string{"containers": {"1024"}},
			GroupBy:  []string{"containers", "annotations", "codec"},
			Vary:     []string{"method", "per_chunk"},
			Baseline: "list",
			Names:    criNames,
			Config:   map[string]string{"method": "chunked", "per_chunk": "16"},
			Limits:   []report.RatioLimit{{Metric: schema.MetricLatencyP50, Max: 0.7}, {Metric: schema.MetricTotalCPU, Max: criChunkedCPUMax}},
			Context:  []report.MetricView{{Name: schema.MetricCPUPerWall}, {Name: schema.MetricCPUPressure}},
		},
		report.Goal{
			Title: "Speed goal: one-container stream",
			Statement: "At 1024 containers, the stream of one container per message costs at most " +
				"1.1x List's total CPU (client + server), both peers at Go's default GOGC.",
			Point:    criPoint,
			Where:    map[string]string{"containers": "1024"},
			In:       criJudgedCodecs,
			Cells:    map[string][]string{"containers": {"1024"}},
			GroupBy:  []string{"containers", "annotations", "codec"},
			Vary:     []string{"method", "per_chunk"},
			Baseline: "list",
			Names:    criNames,
			Config:   map[string]string{"method": "stream"},
			Limits:   []report.RatioLimit{{Metric: schema.MetricTotalCPU, Max: criStreamCPUMax}},
			Context:  []report.MetricView{{Name: schema.MetricLatencyP50}, {Name: schema.MetricCPUPressure}},
		},
		report.FloorSplit{
			Title: "Above grpc-go's floor",
			Statement: "Each method's total CPU (client + server) beside the same listing's at the floor, " +
				"measured in the same turns: the same bytes in the same messages, which neither peer encodes " +
				"nor decodes (codec=floor). The floor is grpc-go's work and the mock's per-message bookkeeping " +
				"(a response struct, a slice of containers); what lies above it is the codec's work and its " +
				"garbage. Each column is the median of its per-round figures.",
			Where:    map[string]string{"containers": "1024"},
			GroupBy:  []string{"containers", "annotations"},
			Variant:  "codec",
			Floor:    "floor",
			Vary:     []string{"method", "per_chunk"},
			Baseline: "list",
			Names:    criNames,
			Metric:   schema.MetricTotalCPU,
			// The two goals' limits on total CPU, above.
			Goals: []report.FloorGoal{
				{Config: map[string]string{"method": "chunked", "per_chunk": "16"}, Max: criChunkedCPUMax},
				{Config: map[string]string{"method": "stream"}, Max: criStreamCPUMax},
			},
		},
		report.ChartSection{
			Title: "Latency p50", GroupBy: []string{"per_chunk"}, Kind: report.BarChart,
			X: "containers", Series: "method", Metric: schema.MetricLatencyP50, LogY: true,
			Names: criNames, In: criJudgedCodecs,
		},
	},
}

var criMetrics = report.Metrics(schema.MetricWallTime, schema.MetricTotalCPU, schema.MetricClientCPUPerOp, schema.MetricServerCPUPerOp, schema.MetricCPUPerWall, schema.MetricLatencyP50, schema.MetricLatencyP99, schema.MetricBytesPerOp, schema.MetricAllocsPerOp)

// The CRI goals' limits on total CPU as a multiple of List's, which the
// floor split also reads.
const (
	criChunkedCPUMax = 1.0
	criStreamCPUMax  = 1.1
)

// criPoint is the operating point of the goals: kubelet's listing, one at
// a time, of a node's containers.
const criPoint = "one client listing 1024 containers (4 labels and 32 annotations each) from the " +
	"mock runtime over a unix socket, one listing at a time, 100 listings a round; the mock " +
	"server pinned to half of the CPUs (one on 2 cores), the client to the rest; the codec its " +
	"scenario names (criwire in the pinned targets)"

// criJudgedCodecs are the codecs a goal judges: a kubelet's and ours, not
// the floor, which decodes nothing ("" is a result from before codecs were
// recorded).
var criJudgedCodecs = map[string][]string{"codec": {"", "proto", "criwire"}}

var criNames = map[string]string{"list": "List", "stream": "Stream", "chunked": "Chunked stream"}
