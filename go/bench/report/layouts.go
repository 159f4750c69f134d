package report

import (
	"strconv"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// DefaultLayout renders a suite without a layout of its own: one table of
// all scenarios with the commonly read metrics, and a bar chart of the
// first of them.
var DefaultLayout = Layout{Sections: []Section{
	ScenarioTable{Title: "Results"},
	ChartSection{Kind: BarChart},
}}

// BuiltinLayouts are the layouts of this repository's suites, keyed by
// suite name. Each relies on the scenario parameters named in its comment;
// a suite whose files lack them falls back to DefaultLayout.
var BuiltinLayouts = map[string]Layout{
	// CRI List vs Stream. Parameters: method (list|stream|chunked),
	// containers, annotations, per_chunk (chunked only), n, and the
	// transport tuning every method of a run shares (window, buffer,
	// pool).
	"cri": {
		Title: "CRI gRPC benchmark: List vs Stream",
		Sections: []Section{
			VariantComparison{
				Title:   "Results",
				GroupBy: []string{"containers", "annotations", "per_chunk", "codec"},
				Variant: "method", Order: []string{"list", "stream", "chunked"},
				Names:   criNames,
				Metrics: criMetrics,
			},
			VariantComparison{
				Title:   "Chunk size impact",
				GroupBy: []string{"method", "containers", "annotations", "codec"},
				Variant: "per_chunk",
				Metrics: criMetrics,
			},
			AllConfigurations{
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
			Goal{
				Title: "Speed goal: chunked stream",
				Statement: "At 1024 containers, the chunked stream of 16 containers per message reaches at " +
					"most 0.7x List's latency p50 at no more than List's total CPU (client + server), " +
					"both peers at Go's default GOGC. Streams win latency only where server and client " +
					"run at once, so read the host's CPU pressure next to the ratios: near 100% means " +
					"the peers took turns on busy cores.",
				Where:    map[string]string{"containers": "1024"},
				In:       criJudgedCodecs,
				Cells:    map[string][]string{"containers": {"1024"}},
				GroupBy:  []string{"containers", "annotations", "codec"},
				Vary:     []string{"method", "per_chunk"},
				Baseline: "list",
				Names:    criNames,
				Config:   map[string]string{"method": "chunked", "per_chunk": "16"},
				Limits:   []RatioLimit{{Metric: schema.MetricLatencyP50, Max: 0.7}, {Metric: schema.MetricTotalCPU, Max: criChunkedCPUMax}},
				Context:  []MetricView{{Name: schema.MetricCPUPerWall}, {Name: schema.MetricCPUPressure}},
			},
			Goal{
				Title: "Speed goal: one-container stream",
				Statement: "At 1024 containers, the stream of one container per message costs at most " +
					"1.1x List's total CPU (client + server), both peers at Go's default GOGC.",
				Where:    map[string]string{"containers": "1024"},
				In:       criJudgedCodecs,
				Cells:    map[string][]string{"containers": {"1024"}},
				GroupBy:  []string{"containers", "annotations", "codec"},
				Vary:     []string{"method", "per_chunk"},
				Baseline: "list",
				Names:    criNames,
				Config:   map[string]string{"method": "stream"},
				Limits:   []RatioLimit{{Metric: schema.MetricTotalCPU, Max: criStreamCPUMax}},
				Context:  []MetricView{{Name: schema.MetricLatencyP50}, {Name: schema.MetricCPUPressure}},
			},
			FloorSplit{
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
				Goals: []FloorGoal{
					{Config: map[string]string{"method": "chunked", "per_chunk": "16"}, Max: criChunkedCPUMax},
					{Config: map[string]string{"method": "stream"}, Max: criStreamCPUMax},
				},
			},
			ChartSection{
				Title: "Latency p50", GroupBy: []string{"per_chunk"}, Kind: BarChart,
				X: "containers", Series: "method", Metric: schema.MetricLatencyP50, LogY: true,
				Names: criNames, In: criJudgedCodecs,
			},
		},
	},

	// In-process channel tournament. Parameters: workload (unary,
	// server_stream, bidi, ...), competitor, and where they vary, payload
	// and goroutines. The first competitor of each table is the baseline.
	"tournament": {
		Title: "In-process gRPC channel tournament",
		Sections: []Section{
			ScenarioTable{
				Title:     "Throughput",
				GroupBy:   []string{"workload", "payload", "goroutines"},
				RowParams: []string{"competitor"},
				// Client and server share one process here, so its CPU per
				// operation counts both, spinning receivers included.
				Metrics: Metrics(schema.MetricOps, schema.MetricNsPerOp, schema.MetricClientCPUPerOp, schema.MetricBytesPerOp, schema.MetricAllocsPerOp),
				Ratio:   &Ratio{Metric: schema.MetricNsPerOp},
			},
			ScenarioTable{
				Title:     "Latency percentiles",
				GroupBy:   []string{"workload", "payload", "goroutines"},
				RowParams: []string{"competitor"},
				Metrics:   Metrics(schema.MetricLatencyP50, schema.MetricLatencyP90, schema.MetricLatencyP95, schema.MetricLatencyP99),
			},
			// What a large call copying its messages costs, beside what
			// the two copies alone cost (copy-floor) and what generated
			// copy code saves over proto.Merge (ours-merge).
			ScenarioTable{
				Title: "Copying large messages",
				Where: map[string]string{"workload": "unary"},
				In: map[string][]string{
					"payload":    {"102400", "1048576"},
					"competitor": {"grpchan", "ours", "ours-detached", "ours-merge", "copy-floor"},
				},
				GroupBy:   []string{"payload"},
				RowParams: []string{"competitor"},
				Metrics:   Metrics(schema.MetricNsPerOp, schema.MetricLatencyP99, schema.MetricBytesPerOp, schema.MetricAllocsPerOp),
				Ratio:     &Ratio{Metric: schema.MetricNsPerOp},
			},
			// Copying, both channels make the same two copies of each
			// message, which at these sizes are most of a call.
			largeUnaryGoal("ours", "handlers on the caller's goroutine", "grpchan", 0.8),
			largeUnaryGoal("ours-detached", "handlers on their own goroutine, the caller free to leave at its deadline, as grpchan's", "grpchan", 0.8),
			// With the opt-in contract that nobody changes a unary message
			// once sent, each channel is judged against grpchan given the
			// same contract, not against one that still copies.
			largeUnaryGoal("ours-shared", "WithSharedUnaryMessages, handlers on the caller's goroutine", "grpchan-shared", 0.5),
			largeUnaryGoal("ours-detached-shared", "WithSharedUnaryMessages and WithDetachedUnary", "grpchan-shared", 0.5),
		},
	},

	// RouteGuide, Go vs Common Lisp: the server x client matrix.
	// Parameters: impl (the server: go|lisp, or lisp_tuned), client (the load generator:
	// go|lisp; absent in older files, which then render as one client),
	// rpc (unary, server_streaming, client_streaming, bidi_streaming),
	// clients (1, 10, 100). Server comparisons are made with the same
	// client, client comparisons against the same server.
	"routeguide": {
		Title: "RouteGuide: Go vs Common Lisp",
		Sections: []Section{
			PivotTable{
				Title: "Throughput", GroupBy: []string{"rpc", "client"},
				Rows: "clients", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricReqPerSec, Names: implNames,
				Ratio: &PivotRatio{Num: "lisp", Den: "go", Percent: true, Slowdown: true},
			},
			PivotTable{
				Title: "Throughput by client", GroupBy: []string{"rpc", "impl"},
				Rows: "clients", Cols: "client", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricReqPerSec, Names: clientNames,
				Ratio: &PivotRatio{Num: "lisp", Den: "go", Percent: true, Slowdown: true},
			},
			// What each side spends per request: the server's CPU with the
			// same load generator, and each load generator's CPU against the
			// same server. Unlike req/s, these do not mix the two.
			PivotTable{
				Title: "Server CPU per request", GroupBy: []string{"rpc", "client"},
				Rows: "clients", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricServerCPUPerOp, Names: implNames,
				Ratio: &PivotRatio{Num: "lisp", Den: "go", Factor: true},
			},
			// What each server held to serve the cell, beside what it spent:
			// the CPU ratios above come with these.
			PivotTable{
				Title: "Server RSS (after each repetition)", GroupBy: []string{"rpc", "client"},
				Rows: "clients", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricServerRSS, Names: implNames,
				Ratio: &PivotRatio{Num: "lisp", Den: "go", Factor: true},
			},
			PivotTable{
				Title: "Server threads (after each repetition)", GroupBy: []string{"rpc", "client"},
				Rows: "clients", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricServerThreads, Names: implNames,
			},
			PivotTable{
				Title: serverParallelismTitle, GroupBy: []string{"rpc", "client"},
				Rows: "clients", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricServerParallelism, Names: implNames,
			},
			PivotTable{
				Title: "Client CPU per request", GroupBy: []string{"rpc", "impl"},
				Rows: "clients", Cols: "client", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricClientCPUPerOp, Names: clientNames,
				Ratio: &PivotRatio{Num: "lisp", Den: "go", Factor: true},
			},
			routeguideSpeedGoal,
			tunedPair(routeguideSpeedGoal),
			Scaling{
				Title: "Scaling efficiency", GroupBy: []string{"rpc", "client"},
				Series: "impl", X: "clients", Metric: schema.MetricReqPerSec, Names: implNames,
			},
			PivotTable{
				Title: "Requests/s by RPC type", GroupBy: []string{"impl", "client"},
				Rows: "rpc", Cols: "clients", Metric: schema.MetricReqPerSec, Corner: "RPC type",
			},
			PivotTable{
				Title: "Messages/s by RPC type", GroupBy: []string{"impl", "client"},
				Rows: "rpc", Cols: "clients", Metric: schema.MetricMsgPerSec, Corner: "RPC type",
			},
			PivotTable{
				Title: "Latency", GroupBy: []string{"rpc", "client"},
				Rows: "clients", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricLatencyP99, Names: implNames,
			},
			ChartSection{
				Title: "req/s by clients", GroupBy: []string{"impl", "client"}, Kind: LineChart,
				X: "clients", Series: "rpc", Metric: schema.MetricReqPerSec, LogY: true,
			},
			ChartSection{
				Title: "Go vs Lisp req/s", GroupBy: []string{"rpc", "client"}, Kind: BarChart,
				X: "clients", Series: "impl", Metric: schema.MetricReqPerSec, LogY: true, Names: implNames,
			},
		},
	},

	// RouteGuide open loop (the load generators' -rate): each request is due
	// on a fixed schedule and its latency counts from then, so a stall shows
	// in every request queued behind it. Parameters as "routeguide", plus
	// rate (requests/s offered).
	"routeguide_openloop": {
		Title: "RouteGuide open loop: latency at a fixed offered rate",
		Sections: []Section{
			openLoopLatency(schema.MetricLatencyP50),
			openLoopLatency(schema.MetricLatencyP99),
			openLoopLatency(schema.MetricLatencyP999),
			lispGoPivot("Achieved rate", []string{"rpc", "client", "clients"}, "rate", schema.MetricReqPerSec, nil),
			// How late the load generator started the calls: part of every
			// latency above, and the load generator's, not the server's.
			lispGoPivot("Send lag p99 (how late calls started after they were due)", []string{"rpc", "client", "clients"}, "rate", schema.MetricSendLagP99, nil),
			lispGoPivot("Send lag max", []string{"rpc", "client", "clients"}, "rate", schema.MetricSendLagMax, nil),
			// The latency-versus-load curve of a rate sweep, up to each
			// server's saturation, where its latency climbs without bound.
			ChartSection{
				Title: "Latency p99 by offered rate", GroupBy: []string{"rpc", "client", "clients"}, Kind: LineChart,
				X: "rate", Series: "impl", Metric: schema.MetricLatencyP99, LogY: true, Names: implNames,
			},
		},
	},

	// Connection scale (bench/connscale): the RouteGuide servers holding
	// 100 to 10,000 connections, 100 of them busy with unary calls and the
	// rest idle. Parameters: impl (go|lisp), rpc, clients (the busy ones),
	// total_conns, idle_conns.
	"connscale": {
		Title: "Connection scale: Go vs Common Lisp",
		Sections: []Section{
			PivotTable{
				Title: "Throughput", GroupBy: []string{"rpc", "clients"},
				Rows: "total_conns", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricReqPerSec, Names: implNames,
				Ratio: &PivotRatio{Num: "lisp", Den: "go", Percent: true, Slowdown: true},
			},
			PivotTable{
				Title: "Latency p99", GroupBy: []string{"rpc", "clients"},
				Rows: "total_conns", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricLatencyP99, Names: implNames,
			},
			PivotTable{
				Title: "Server marginal RSS per connection (anonymous RSS grown per connection opened, before any call)", GroupBy: []string{"rpc", "clients"},
				Rows: "total_conns", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricServerMarginalRSSPerConn, Names: implNames,
				Ratio: &PivotRatio{Num: "lisp", Den: "go", Factor: true},
			},
			PivotTable{
				Title: "Server RSS per connection (RSS over the connections, starting heap included)", GroupBy: []string{"rpc", "clients"},
				Rows: "total_conns", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricServerRSSPerConn, Names: implNames,
			},
			PivotTable{
				Title: "Connections the server held (its sockets after each repetition)", GroupBy: []string{"rpc", "clients"},
				Rows: "total_conns", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricServerConnsHeld, Names: implNames,
			},
			PivotTable{
				Title: "Server CPU per request", GroupBy: []string{"rpc", "clients"},
				Rows: "total_conns", Cols: "impl", ColOrder: []string{"go", "lisp", "go_tuned", "lisp_tuned"},
				Metric: schema.MetricServerCPUPerOp, Names: implNames,
				Ratio: &PivotRatio{Num: "lisp", Den: "go", Factor: true},
			},
			// Throughput and latency are judged only where the servers set the figures (a saturated
			// closed-loop client adds its own queueing to every latency); memory is the server's
			// whatever the load generator's state.
			Goal{
				Title: "Goal: throughput and latency",
				Statement: "At every connection count, the Lisp server reaches at least the Go server's " +
					"req/s and a p99 latency no higher than Go's. Req/s is judged when both servers " +
					"were its bottleneck (at least 85% of their CPUs busy, the load generator less), or when the verdict holds " +
					"anyway, over the headroom each server had left. Latency is judged only in an open loop " +
					"below both servers' capacity: in this closed loop it is shown, not decided.",
				GroupBy:  []string{"rpc", "clients", "total_conns"},
				Cells:    map[string][]string{"total_conns": {"100", "1000", "10000"}},
				Vary:     []string{"impl"},
				Baseline: "go",
				Config:   map[string]string{"impl": "lisp"}, // the tuned server is shown, not judged
				Names:    implNames,
				Limits: []RatioLimit{
					{Metric: schema.MetricReqPerSec, Min: 1},
					{Metric: schema.MetricLatencyP99, Max: 1},
				},
				Bottleneck: "bottleneck",
				Context: Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation,
					schema.MetricServerCPUPerOp, schema.MetricCPUPressure),
			},
			Goal{
				Title: "Goal: memory",
				Statement: "At every connection count, what one more connection costs the Lisp " +
					"server in memory (its anonymous RSS grown from before the cell's connections " +
					"opened to once they settled, before any call, per connection; each cell on a " +
					"freshly started server) is at most 2x what it costs the Go server.",
				GroupBy:  []string{"rpc", "clients", "total_conns"},
				Cells:    map[string][]string{"total_conns": {"100", "1000", "10000"}},
				Vary:     []string{"impl"},
				Baseline: "go",
				Config:   map[string]string{"impl": "lisp"},
				Names:    implNames,
				Limits:   []RatioLimit{{Metric: schema.MetricServerMarginalRSSPerConn, Max: 2}},
				Context:  Metrics(schema.MetricServerRSSPerConn, schema.MetricServerConnsHeld, schema.MetricCPUPressure),
			},
		},
	},

	"routeguide_capped": cappedLayout,

	"routeguide_quota": quotaSweepLayout,

	"routeguide_shared": sharedConnLayout,

	"handlercost": handlerCostLayout,

	// RouteGuide over TLS (the load generator's -tls): the "routeguide"
	// parameters, the Go load generator only.
	"routeguide_tls": {
		Title: "RouteGuide over TLS: Go vs Common Lisp",
		Sections: []Section{
			lispGoPivot("Throughput", []string{"rpc", "client"}, "clients", schema.MetricReqPerSec, lispOverGoPercent),
			lispGoPivot("Server CPU per request", []string{"rpc", "client"}, "clients", schema.MetricServerCPUPerOp, lispOverGoFactor),
			lispGoPivot("Latency", []string{"rpc", "client"}, "clients", schema.MetricLatencyP99, nil),
			tlsCPUGoal([]string{"rpc", "clients"}, routeguideCells),
		},
	},

	// Connection scale over TLS: the "connscale" parameters.
	"connscale_tls": {
		Title: "Connection scale over TLS: Go vs Common Lisp",
		Sections: []Section{
			lispGoPivot("Throughput", []string{"rpc", "clients"}, "total_conns", schema.MetricReqPerSec, lispOverGoPercent),
			lispGoPivot("Server CPU per request", []string{"rpc", "clients"}, "total_conns", schema.MetricServerCPUPerOp, lispOverGoFactor),
			lispGoPivot("Server marginal RSS per connection (anonymous RSS grown per connection opened, before any call)", []string{"rpc", "clients"}, "total_conns", schema.MetricServerMarginalRSSPerConn, lispOverGoFactor),
			lispGoPivot("Latency p99", []string{"rpc", "clients"}, "total_conns", schema.MetricLatencyP99, nil),
			tlsCPUGoal([]string{"rpc", "clients", "total_conns"}, map[string][]string{"total_conns": {"1000"}}),
		},
	},

	// gRPC's standard scenarios through the qps workers (go/qps/bench).
	// Parameters: scenario, payload, server, client (go|lisp), rpc_type,
	// channels, outstanding, and bottleneck (client|server|neither).
	"qps": {
		Title: "gRPC's benchmark scenarios, through the qps workers",
		Sections: []Section{
			PivotTable{
				Title: "QPS per server core", GroupBy: []string{"payload", "client"},
				Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
				Metric: schema.MetricQPSPerServerCore, Names: implNames,
				Ratio: &PivotRatio{Num: "lisp", Den: "go", Factor: true},
			},
			PivotTable{
				Title: "Server utilisation (CPU time over wall time and the server's cores)", GroupBy: []string{"payload", "client"},
				Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
				Metric: schema.MetricServerUtilisation, Names: implNames,
			},
			PivotTable{
				Title: "Client utilisation (CPU time over wall time and the client's cores)", GroupBy: []string{"payload", "client"},
				Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
				Metric: schema.MetricClientUtilisation, Names: implNames,
			},
			PivotTable{
				Title: "Latency p99", GroupBy: []string{"payload", "client"},
				Rows: "scenario", Cols: "server", ColOrder: []string{"go", "lisp"},
				Metric: schema.MetricLatencyP99, Names: implNames,
			},
			Goal{
				Title: "Goal",
				Statement: "In every scenario, the Lisp server's qps per server core is at least the Go " +
					"server's. A cell is judged when both servers were the bottleneck (at least 85% of " +
					"their cores busy, their client less), or when the verdict holds anyway: the Lisp " +
					"server at its capacity below a Go figure that can only understate Go's, or a Go " +
					"server at its capacity that the Lisp figure already matches. A figure a saturated " +
					"client set, or one neither side was pushed to, says nothing else about the server. " +
					"The bound must hold over the headroom each server had left (its figure over its share " +
					"of CPU busy).",
				GroupBy:    []string{"scenario", "payload", "client"},
				Vary:       []string{"server"},
				Baseline:   "go",
				Config:     map[string]string{"server": "lisp"},
				Names:      implNames,
				Limits:     []RatioLimit{{Metric: schema.MetricQPSPerServerCore, Min: 1}},
				Bottleneck: "bottleneck",
				Context:    Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation, schema.MetricServerCPUPerOp),
			},
		},
	},

	// Kubernetes content types (go/kcpbench). Parameters: benchmark
	// (WithClientCM and WithClientRBAC against kcp, SerializationCM/encode
	// etc. for the micro-benchmark), content_type. JSON is the baseline.
	// The serialization rows also have encoded_bytes.
	"kubernetes": {
		Title: "Kubernetes content types",
		Sections: []Section{
			ScenarioTable{
				Title:     "Results",
				GroupBy:   []string{"benchmark"},
				RowParams: []string{"content_type"},
				Metrics:   Metrics(schema.MetricOps, schema.MetricNsPerOp, schema.MetricClientCPUPerOp, schema.MetricServerCPUPerOp, schema.MetricBytesPerOp, schema.MetricAllocsPerOp, schema.MetricEncodedBytes),
				Ratio:     &Ratio{Metric: schema.MetricNsPerOp, Baseline: "application/json"},
			},
			Notes{Title: "Method", Text: kubernetesMethod},
		},
	},
}

var criMetrics = Metrics(schema.MetricWallTime, schema.MetricTotalCPU, schema.MetricClientCPUPerOp, schema.MetricServerCPUPerOp, schema.MetricCPUPerWall, schema.MetricLatencyP50, schema.MetricLatencyP99, schema.MetricBytesPerOp, schema.MetricAllocsPerOp)

// The CRI goals' limits on total CPU as a multiple of List's, which the
// floor split also reads.
const (
	criChunkedCPUMax = 1.0
	criStreamCPUMax  = 1.1
)

// criJudgedCodecs are the codecs a goal judges: a kubelet's and ours, not
// the floor, which decodes nothing ("" is a result from before codecs were
// recorded).
var criJudgedCodecs = map[string][]string{"codec": {"", "proto", "criwire"}}

var criNames = map[string]string{"list": "List", "stream": "Stream", "chunked": "Chunked stream"}

// implNames name the servers; "go_tuned" and "lisp_tuned" are the servers
// with their tuning flags (bench/routeguide/matrix.bzl), shown beside the
// defaults and judged against each other (tunedPair).
var implNames = map[string]string{"go": "Go", "lisp": "Lisp", "go_tuned": "Go, tuned", "lisp_tuned": "Lisp, tuned"}

// clientNames head the columns of client comparisons ("Go client (req/s)").
var clientNames = map[string]string{"go": "Go client", "lisp": "Lisp client"}

// kubernetesMethod says how the kubernetes suite's figures are made, and
// why they differ in kind from the prior measurement's
// (docs/prior-results.md, go/kcpbench/README.md).
var kubernetesMethod = []string{
	"WithClient*: one op is create + get + delete through client-go against a real kcp on " +
		"loopback; Bytes/op and Allocs/op are the client's. The content type, Accept header and " +
		"a disabled rate limiter (QPS=-1) are set on the rest.Config before the client is built, " +
		"and each scenario first checks on the wire that requests and responses really use its " +
		"content type. Set after the client is built, they change nothing: every content type then " +
		"runs as JSON behind client-go's 5 requests/s limiter, about 550 ms/op for all four.",
	"Serialization*: Kubernetes' own serializers (apimachinery json, yaml, protobuf, cbor) in a " +
		"b.Loop benchmark; Encoded bytes is the object's size in that format. A benchmark that " +
		"does its work once instead of b.N times prints figures such as 0.0000240 ns/op; here a " +
		"figure below 1 ns/op fails the scenario.",
}

// openLoopLatency is one latency percentile of the open-loop suite, Go and
// Lisp servers side by side at the same offered rate and load generator.
func openLoopLatency(metric string) PivotTable {
	return PivotTable{
		Title: MetricLabel(metric), GroupBy: []string{"rpc", "client", "clients"},
		Rows: "rate", Cols: "impl", ColOrder: []string{"go", "lisp"},
		Metric: metric, Names: implNames,
		Ratio: &PivotRatio{Num: "lisp", Den: "go", Factor: true},
	}
}

// largeUnaryGoal is the in-process channel's goal for large messages, for
// one of its modes: at most limit times the baseline's ns/op at 100 KiB and
// 1 MiB, with a p99 no worse.
func largeUnaryGoal(competitor, mode, baseline string, limit float64) Goal {
	return Goal{
		Title: "Speed goal: large unary, " + competitor,
		Statement: "At 100 KiB and 1 MiB, " + competitor + " (" + mode + ") takes at most " + strconv.FormatFloat(limit, 'g', -1, 64) + "x " +
			baseline + "'s ns/op, with a latency p99 no higher than " + baseline + "'s.",
		Where:    map[string]string{"workload": "unary"},
		In:       map[string][]string{"payload": {"102400", "1048576"}},
		Cells:    map[string][]string{"payload": {"102400", "1048576"}},
		GroupBy:  []string{"payload"},
		Vary:     []string{"competitor"},
		Baseline: baseline,
		Config:   map[string]string{"competitor": competitor},
		Limits:   []RatioLimit{{Metric: schema.MetricNsPerOp, Max: limit}, {Metric: schema.MetricLatencyP99, Max: 1}},
		Context:  []MetricView{{Name: schema.MetricBytesPerOp}, {Name: schema.MetricCPUPressure}},
	}
}

// tlsCPUGoal judges the Lisp server's CPU per request over TLS against the
// Go server's, with the same Go load generator, in every cell named.
func tlsCPUGoal(groupBy []string, cells map[string][]string) Goal {
	return Goal{
		Title: "Goal: CPU per request over TLS",
		Statement: "With the same Go load generator over TLS, the Lisp server spends at most the Go " +
			"server's CPU per request (user and system time of the server process over the requests " +
			"it completed) in every cell.",
		Where:    map[string]string{"client": "go"},
		GroupBy:  groupBy,
		Cells:    cells,
		Vary:     []string{"impl"},
		Baseline: "go",
		Config:   map[string]string{"impl": "lisp"},
		Names:    implNames,
		Limits:   []RatioLimit{{Metric: schema.MetricServerCPUPerOp, Max: 1}},
		Context: Metrics(schema.MetricReqPerSec, schema.MetricServerUtilisation, schema.MetricClientUtilisation,
			schema.MetricCPUPressure),
	}
}

// The Lisp/Go ratio of a pivot table: as a percentage with "faster" or
// "slower" (throughput), or as a factor (costs).
var (
	lispOverGoPercent = &PivotRatio{Num: "lisp", Den: "go", Percent: true, Slowdown: true}
	lispOverGoFactor  = &PivotRatio{Num: "lisp", Den: "go", Factor: true}
)

// lispGoPivot is a table of one metric with the Go and the Lisp server side
// by side (and the tuned servers after them, where measured), rows by a
// parameter, and their ratio if any.
func lispGoPivot(title string, groupBy []string, rows, metric string, ratio *PivotRatio) PivotTable {
	return PivotTable{
		Title: title, GroupBy: groupBy,
		Rows: rows, Cols: "impl", ColOrder: []string{"go", "lisp"},
		Metric: metric, Names: implNames, Ratio: ratio,
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
		"of CPU busy).",
	RatioLimit{Metric: schema.MetricReqPerSec, Min: 0.5}, "bottleneck",
	Metrics(schema.MetricServerUtilisation, schema.MetricClientUtilisation,
		schema.MetricServerCPUPerOp, schema.MetricCPUPressure))
