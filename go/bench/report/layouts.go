package report

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
	// containers, annotations, per_chunk (chunked only), n.
	"cri": {
		Title: "CRI gRPC benchmark: List vs Stream",
		Sections: []Section{
			VariantComparison{
				Title:   "Results",
				GroupBy: []string{"containers", "annotations", "per_chunk"},
				Variant: "method", Order: []string{"list", "stream", "chunked"},
				Names:   criNames,
				Metrics: criMetrics,
			},
			VariantComparison{
				Title:   "Chunk size impact",
				GroupBy: []string{"method", "containers", "annotations"},
				Variant: "per_chunk",
				Metrics: criMetrics,
			},
			ChartSection{
				Title: "Latency p50", GroupBy: []string{"per_chunk"}, Kind: BarChart,
				X: "containers", Series: "method", Metric: "latency_p50", LogY: true,
				Names: criNames,
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
				Metrics:   Metrics("ops", "ns_per_op", "bytes_per_op", "allocs_per_op"),
				Ratio:     &Ratio{Metric: "ns_per_op"},
			},
			ScenarioTable{
				Title:     "Latency percentiles",
				GroupBy:   []string{"workload", "payload", "goroutines"},
				RowParams: []string{"competitor"},
				Metrics:   Metrics("latency_p50", "latency_p90", "latency_p95", "latency_p99"),
			},
		},
	},

	// RouteGuide, Go vs Common Lisp. Parameters: impl (go|lisp), rpc
	// (unary, server_streaming, client_streaming, bidi_streaming),
	// clients (1, 10, 100).
	"routeguide": {
		Title: "RouteGuide: Go vs Common Lisp",
		Sections: []Section{
			PivotTable{
				Title: "Throughput", GroupBy: []string{"rpc"},
				Rows: "clients", Cols: "impl", ColOrder: []string{"go", "lisp"},
				Metric: "req_per_s", Names: implNames,
				Ratio: &PivotRatio{Num: "lisp", Den: "go", Percent: true, Slowdown: true},
			},
			Scaling{
				Title: "Scaling efficiency", GroupBy: []string{"rpc"},
				Series: "impl", X: "clients", Metric: "req_per_s", Names: implNames,
			},
			PivotTable{
				Title: "Requests/s by RPC type", GroupBy: []string{"impl"},
				Rows: "rpc", Cols: "clients", Metric: "req_per_s", Corner: "RPC type",
			},
			PivotTable{
				Title: "Messages/s by RPC type", GroupBy: []string{"impl"},
				Rows: "rpc", Cols: "clients", Metric: "msg_per_s", Corner: "RPC type",
			},
			PivotTable{
				Title: "Latency", GroupBy: []string{"rpc"},
				Rows: "clients", Cols: "impl", ColOrder: []string{"go", "lisp"},
				Metric: "latency_p99", Names: implNames,
			},
			ChartSection{
				Title: "req/s by clients", GroupBy: []string{"impl"}, Kind: LineChart,
				X: "clients", Series: "rpc", Metric: "req_per_s", LogY: true,
			},
			ChartSection{
				Title: "Go vs Lisp req/s", GroupBy: []string{"rpc"}, Kind: BarChart,
				X: "clients", Series: "impl", Metric: "req_per_s", LogY: true, Names: implNames,
			},
		},
	},

	// Kubernetes content types. Parameters: benchmark (e.g.
	// WithClientCM), content_type. JSON is the baseline.
	"kubernetes": {
		Title: "Kubernetes content types",
		Sections: []Section{
			ScenarioTable{
				Title:     "Results",
				GroupBy:   []string{"benchmark"},
				RowParams: []string{"content_type"},
				Metrics:   Metrics("ops", "ns_per_op", "bytes_per_op", "allocs_per_op"),
				Ratio:     &Ratio{Metric: "ns_per_op", Baseline: "application/json"},
			},
		},
	},
}

var criMetrics = Metrics("wall_time", "total_cpu", "cpu_per_wall", "latency_p50", "latency_p99", "bytes_per_op", "allocs_per_op")

var criNames = map[string]string{"list": "List", "stream": "Stream", "chunked": "Chunked stream"}

var implNames = map[string]string{"go": "Go", "lisp": "Lisp"}
