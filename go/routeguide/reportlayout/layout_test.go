package reportlayout

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// The RouteGuide report shows CPU per request for each side apart, with
// the Lisp/Go factor: the comparison that does not mix in the load
// generator's cost.
func TestRouteGuideCPUPerRequest(t *testing.T) {
	f := schema.NewFile("routeguide", schema.Environment{CPUCount: 2, Platform: "linux_amd64"})
	for _, c := range []struct {
		impl, client      string
		server, clientCPU float64 // ns/op
	}{
		{"go", "go", 53600, 30000}, {"lisp", "go", 41900, 31000},
		{"go", "lisp", 54000, 45000}, {"lisp", "lisp", 42000, 46000},
	} {
		f.Results = append(f.Results, schema.Result{
			Scenario:   c.impl + "/" + c.client + "/unary/clients=1",
			Parameters: map[string]any{"impl": c.impl, "client": c.client, "rpc": "unary", "clients": 1},
			Status:     schema.StatusOK,
			Metrics: []schema.Metric{
				schema.NewMetric("req_per_s", schema.UnitReqPerSec, schema.HigherIsBetter, []float64{10000}),
				schema.NewMetric("server_cpu_per_op", schema.UnitNsPerOp, schema.LowerIsBetter, []float64{c.server}),
				schema.NewMetric("client_cpu_per_op", schema.UnitNsPerOp, schema.LowerIsBetter, []float64{c.clientCPU}),
			},
		})
	}
	md, err := report.Markdown([]*schema.File{f})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"### Server CPU per request",
		"| Clients | Go (Server CPU ns/op) | Lisp (Server CPU ns/op) | Lisp/Go |",
		"| 1 | 53,600 | 41,900 | 0.78x ~ (p=1.000 n=1) |",
		"### Client CPU per request",
		"| 1 | 30,000 | 45,000 | 1.50x ~ (p=1.000 n=1) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// The capped suite says what the quota was and that its latency is not to
// be read, judges CPU per request in every cell, and judges throughput
// where the servers, not the load generator, were the bottleneck.
func TestCappedSuite(t *testing.T) {
	f := schema.NewFile("routeguide_capped", schema.Environment{CPUCount: 2, Platform: "linux_amd64",
		Extra: map[string]string{schema.ExtraServerCPUQuota: "0.25 cores (a CFS quota per 10ms period)"}})
	reps := func(v float64) []float64 { return []float64{v, v * 1.01, v * 0.99, v * 1.02, v * 0.98, v} }
	for _, impl := range []string{"go", "lisp"} {
		serverCPU := 40000.0
		if impl == "lisp" {
			serverCPU = 36000
		}
		f.Results = append(f.Results, schema.Result{
			Scenario: impl + "/unary/clients=10/cpu_quota=0.25",
			Parameters: map[string]any{"impl": impl, "client": "go", "rpc": "unary", "clients": 10,
				"server_cpu_quota": 0.25, "bottleneck": "server"},
			Status: schema.StatusOK,
			Metrics: []schema.Metric{
				schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, reps(250e6/serverCPU)),
				schema.NewMetric(schema.MetricServerCPUPerOp, schema.UnitNsPerOp, schema.LowerIsBetter, reps(serverCPU)),
				schema.NewMetric(schema.MetricServerUtilisation, schema.UnitRatio, schema.LowerIsBetter, reps(0.99)),
				schema.NewMetric(schema.MetricClientUtilisation, schema.UnitRatio, schema.LowerIsBetter, reps(0.4)),
				schema.NewMetric(schema.MetricServerThrottled, schema.UnitRatio, schema.LowerIsBetter, reps(0.95)),
			},
		})
	}
	md, err := report.Markdown([]*schema.File{f})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## RouteGuide with the servers capped below a core",
		"- **Server CPU quota:** 0.25 cores (a CFS quota per 10ms period). A throttled server waits",
		"### Speed goal, servers capped",
		"### Goal: at or under Go's CPU per request, servers capped",
		"0.90x (met",
		"Server throttled by its CPU quota",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Latency") {
		t.Errorf("the capped report shows a latency:\n%s", md)
	}
}

// The tuned servers are judged against each other, in goals of their own,
// and the defaults against the defaults: neither side's tuning is weighed
// against the other's defaults.
func TestTunedServersAreJudgedAgainstEachOther(t *testing.T) {
	f := schema.NewFile("routeguide_shared", schema.Environment{CPUCount: 2, Platform: "linux_amd64"})
	reps := func(v float64) []float64 { return []float64{v, v * 1.01, v * 0.99, v * 1.02, v * 0.98, v} }
	for impl, serverCPU := range map[string]float64{"go": 40000, "lisp": 36000, "go_tuned": 30000, "lisp_tuned": 15000} {
		f.Results = append(f.Results, schema.Result{
			Scenario: impl + "/unary/clients=100",
			Parameters: map[string]any{"impl": impl, "client": "go", "rpc": "unary", "clients": 100,
				"conns": "shared", "bottleneck": "server"},
			Status: schema.StatusOK,
			Metrics: []schema.Metric{
				schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, reps(1e9/serverCPU)),
				schema.NewMetric(schema.MetricServerCPUPerOp, schema.UnitNsPerOp, schema.LowerIsBetter, reps(serverCPU)),
			},
		})
	}
	md, err := report.Markdown([]*schema.File{f})
	if err != nil {
		t.Fatal(err)
	}
	section := func(heading string) string {
		i := strings.Index(md, heading+"\n")
		if i < 0 {
			t.Fatalf("report lacks %q:\n%s", heading, md)
		}
		rest := md[i+len(heading):]
		if j := strings.Index(rest, "\n### "); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	tuned := section("### Goal: at or under Go's CPU per request, one connection, both servers tuned")
	defaults := section("### Goal: at or under Go's CPU per request, one connection")
	for _, c := range []struct{ section, want string }{
		{tuned, "Both servers tuned: the Go server with 4 stream workers"},
		{tuned, "| Lisp, tuned | 0.50x"},
		{tuned, "(of Go, tuned's: Server CPU ns/op at most 1x)"},
		{defaults, "Both servers at their defaults."},
		{defaults, "| Lisp | 0.90x"},
	} {
		if !strings.Contains(c.section, c.want) {
			t.Errorf("report lacks %q:\n%s", c.want, md)
		}
	}
	if strings.Contains(tuned, "| Lisp |") || strings.Contains(defaults, "| Lisp, tuned |") {
		t.Errorf("a goal judges a server of the other pair:\n%s", md)
	}
}
