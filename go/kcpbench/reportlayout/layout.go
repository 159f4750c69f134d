// Package reportlayout lays out the "kubernetes" suite's results
// (go/kcpbench) in the benchmark report: it registers them with
// go/bench/report when linked in.
package reportlayout

import (
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Kubernetes content types (go/kcpbench). Parameters: benchmark
// (WithClientCM and WithClientRBAC against kcp, SerializationCM/encode
// etc. for the micro-benchmark), content_type. JSON is the baseline.
// The serialization rows also have encoded_bytes.
var kubernetesLayout = report.Layout{
	Title: "Kubernetes content types",
	Sections: []report.Section{
		report.ScenarioTable{
			Title:     "Results",
			GroupBy:   []string{"benchmark"},
			RowParams: []string{"content_type"},
			Metrics:   report.Metrics(schema.MetricOps, schema.MetricNsPerOp, schema.MetricClientCPUPerOp, schema.MetricServerCPUPerOp, schema.MetricBytesPerOp, schema.MetricAllocsPerOp, schema.MetricEncodedBytes),
			Ratio:     &report.Ratio{Metric: schema.MetricNsPerOp, Baseline: "application/json"},
		},
		report.Notes{Title: "Method", Text: kubernetesMethod},
	},
}

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
