package harness

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func benchfmtInput() *schema.File {
	f := schema.NewFile("route_guide", schema.Environment{
		CPUModel: "Intel(R) Xeon(R) CPU @ 2.20GHz", CPUCount: 2, GOMAXPROCS: 2,
		Kernel: "Linux 6.12.15", GoVersion: "go1.26.8", Platform: "linux_amd64", BuildConfig: "opt",
	})
	reps := []Rep{
		{Wall: 5e9, Ops: 150000, AllocBytes: 150000 * 1200, Allocs: 150000 * 25, Latency: Percentiles{P50: 300e3, P90: 500e3, P95: 600e3, P99: 1e6, Max: 2e6}},
		{Wall: 5e9, Ops: 160000, Errors: 2, AllocBytes: 160002 * 1100, Allocs: 160002 * 24, Latency: Percentiles{P50: 290e3, P90: 480e3, P95: 590e3, P99: 9e5, Max: 3e6}},
	}
	f.Results = []schema.Result{
		Result("unary/clients=10", map[string]any{"clients": 10}, reps, nil),
		ErrorResult("bidi/clients=10", nil, errors.New("not implemented")),
	}
	return f
}

// The output must be read back by the same parser benchstat uses, with
// every repetition a result and the units benchstat understands.
func TestBenchfmtParsesBack(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteBenchfmt(&buf, benchfmtInput(), "github.com/grpcbench/grpcbench/go/routeguide/bench"); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	t.Logf("benchfmt output:\n%s", text)
	for _, header := range []string{"goos: linux\n", "goarch: amd64\n", "pkg: github.com/grpcbench/grpcbench/go/routeguide/bench\n", "cpu: Intel(R) Xeon(R) CPU @ 2.20GHz\n"} {
		if !strings.Contains(text, header) {
			t.Errorf("missing header %q in:\n%s", header, text)
		}
	}
	r := benchfmt.NewReader(strings.NewReader(text), "out.txt")
	var results []*benchfmt.Result
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			results = append(results, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want one per repetition of the ok scenario:\n%s", len(results), text)
	}
	first := results[0]
	// The reader strips the "Benchmark" prefix.
	if got := first.Name.String(); got != "RouteGuide/unary/clients=10-2" {
		t.Errorf("name %q", got)
	}
	if first.Iters != 150000 || results[1].Iters != 160000 {
		t.Errorf("iterations %d, %d; want the ops of each repetition", first.Iters, results[1].Iters)
	}
	if got := first.GetConfig("pkg"); got != "github.com/grpcbench/grpcbench/go/routeguide/bench" {
		t.Errorf("pkg config %q", got)
	}
	want := map[string]float64{
		"sec/op":          5e9 / 150000 / 1e9, // ns/op, tidied by the reader
		"B/op":            1200,
		"allocs/op":       25,
		"req/s":           30000,
		"latency-p99-sec": 1e-3,
		"wall-time-sec":   5,
		"errors":          0,
	}
	for unit, w := range want {
		got, ok := first.Value(unit)
		if !ok {
			t.Errorf("unit %s missing", unit)
			continue
		}
		// go test prints about five significant digits.
		if diff := got - w; diff > 1e-4*w || diff < -1e-4*w {
			t.Errorf("%s = %v, want %v", unit, got, w)
		}
	}
	if v, _ := results[1].Value("errors"); v != 2 {
		t.Errorf("rep 2 errors = %v, want 2", v)
	}
	if first.Values[0].Unit != "sec/op" || first.Values[1].Unit != "B/op" || first.Values[2].Unit != "allocs/op" {
		t.Errorf("the go test units must come first: %+v", first.Values[:3])
	}
}

func TestBenchName(t *testing.T) {
	for in, want := range map[string]string{"routeguide": "Routeguide", "route_guide": "RouteGuide", "k8s-content_types": "K8sContentTypes"} {
		if got := benchName(in); got != want {
			t.Errorf("benchName(%q) = %q, want %q", in, got, want)
		}
	}
}
