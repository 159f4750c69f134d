package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func TestCompareSignificance(t *testing.T) {
	c, err := Compare(readFiles(t, "compare_old.json"), readFiles(t, "compare_new.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]MetricChange{}
	for _, ch := range c.Changes {
		got[ch.Scenario+" "+ch.Metric] = ch
	}
	wall := got["stream/containers=32 wall_time"]
	if !wall.Significant() || wall.Verdict() != "better" || wall.Delta() != "-11.49%" {
		t.Errorf("wall time: significant=%v verdict=%q delta=%q; want a significant -11.49%% improvement",
			wall.Significant(), wall.Verdict(), wall.Delta())
	}
	if b := got["stream/containers=32 bytes_per_op"]; b.Verdict() != "worse" {
		t.Errorf("bytes/op verdict %q, want worse", b.Verdict())
	}
	if a := got["stream/containers=32 allocs_per_op"]; a.Significant() || a.Delta() != "~" {
		t.Errorf("allocs/op: significant=%v delta=%q; want ~", a.Significant(), a.Delta())
	}
	// Three repetitions cannot show significance at 0.05; that must be said.
	if l := got["list/containers=32 wall_time"]; l.Significant() {
		t.Error("3 vs 3 repetitions reported significant")
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "need >= 4 samples") {
		t.Errorf("notes %q lack the sample-size warning", c.Notes)
	}
}

func TestRegressionsOnlyOfPrimaryMetrics(t *testing.T) {
	c, err := Compare(readFiles(t, "compare_old.json"), readFiles(t, "compare_new.json"))
	if err != nil {
		t.Fatal(err)
	}
	// bytes/op is significantly worse by 4.08%, but no package registered
	// the files' suite here, so it is judged on DefaultPrimaryMetrics, which
	// these files lack.
	if b := c.Changes[2]; b.Metric != "bytes_per_op" || b.Verdict() != "worse" || b.Primary {
		t.Fatalf("change %+v, want bytes_per_op worse and not primary", b)
	}
	if r := c.Regressions(0); len(r) != 0 {
		t.Errorf("regressions %v, want none: no primary metric changed", r)
	}
}

// gateFiles are an old and a new routeguide run of n scenarios, 6
// repetitions each of req/s and p99.9 latency; worse says how many of the
// scenarios lost 10% of their req/s, every repetition below every old one.
func gateFiles(n, worse int) (old, new *schema.File) {
	old, new = schema.NewFile("routeguide", oneRun), schema.NewFile("routeguide", oneRun)
	base := []float64{1000, 1010, 990, 1005, 995, 1002}
	for i := range n {
		name := fmt.Sprintf("go/unary/clients=%d", i+1)
		now := slices.Clone(base)
		slices.Reverse(now) // the same values in another order: no change
		if i < worse {
			for j := range now {
				now[j] *= 0.9
			}
		}
		tail := []float64{1, 2, 3, 4, 5, 6}
		for _, f := range []struct {
			file     *schema.File
			req, p99 []float64
		}{{old, base, tail}, {new, now, []float64{60, 70, 80, 90, 100, 110}}} {
			f.file.Results = append(f.file.Results, schema.Result{
				Scenario: name, Status: schema.StatusOK,
				Metrics: []schema.Metric{
					schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, f.req),
					schema.NewMetric(schema.MetricLatencyP999, schema.UnitNanoseconds, schema.LowerIsBetter, f.p99),
				},
			})
		}
	}
	return old, new
}

func TestRegressionGateCorrectsForTheMetricsItTests(t *testing.T) {
	for _, tc := range []struct {
		name             string
		scenarios, worse int
		want             int
	}{
		// 6 against 6, fully apart: p = 0.0022, under 0.05 alone.
		{"one scenario, worse", 1, 1, 1},
		{"one scenario, unchanged", 1, 0, 0},
		// Among 20 tests, the smallest p must be under 0.05/20 = 0.0025.
		{"one of 20 worse", 20, 1, 1},
		// Among 30, under 0.0017: one cell of 6 repetitions cannot be.
		{"one of 30 worse", 30, 1, 0},
		// Every cell worse: each p under its rank's bound.
		{"all of 30 worse", 30, 30, 30},
		{"30 unchanged", 30, 0, 0},
	} {
		old, new := gateFiles(tc.scenarios, tc.worse)
		c, err := Compare([]*schema.File{old}, []*schema.File{new})
		if err != nil {
			t.Fatal(err)
		}
		r := c.Regressions(5)
		if len(r) != tc.want {
			t.Errorf("%s: %d regressions, want %d: %v", tc.name, len(r), tc.want, r)
		}
		for _, ch := range r {
			if ch.Metric != schema.MetricReqPerSec {
				t.Errorf("%s: a regression of %s, which the routeguide suite is not judged on", tc.name, ch.Metric)
			}
		}
		// p99.9 is 20 times worse everywhere, significantly, and never gates.
		for _, ch := range c.Changes {
			if ch.Metric == schema.MetricLatencyP999 && (ch.Verdict() != "worse" || ch.Primary || ch.Gated) {
				t.Errorf("%s: p99.9 %+v", tc.name, ch)
			}
		}
	}
}

func TestRenderRejectsDuplicateScenario(t *testing.T) {
	files := readFiles(t, "cri.json", "cri.json")
	if _, err := Render(files, Options{}); err == nil || !strings.Contains(err.Error(), "--compare") {
		t.Errorf("Render(same file twice) error = %v, want a duplicate-scenario error", err)
	}
}

// A suite with a built-in layout whose parameters it does not use must
// still show its numbers.
func TestRenderFallsBackToDefaultLayout(t *testing.T) {
	f := readFiles(t, "unknown.json")[0]
	f.Suite = "routeguide" // its layout pivots on impl/rpc/clients, absent here
	md, err := Markdown([]*schema.File{f})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "| small | 1,050 ±4.8% | 512 |") {
		t.Errorf("fallback table missing:\n%s", md)
	}
	if strings.Contains(md, ".svg") {
		t.Error("Markdown (terminal output) must not link charts")
	}
}

func TestRenderWithSuiteLayout(t *testing.T) {
	layout := Layout{Title: "Custom", Sections: []Section{SectionFunc(func(d *Dataset, p *Page) {
		p.Table(Table{Header: []string{"Scenarios"}, Rows: [][]string{{FormatNumber(float64(len(d.Rows)))}}})
	})}}
	r, err := Render(readFiles(t, "unknown.json"), Options{Layouts: map[string]Layout{"echo": layout}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Markdown, "## Custom") || !strings.Contains(r.Markdown, "| 2 |") {
		t.Errorf("custom layout not used:\n%s", r.Markdown)
	}
}

// Tables print a median's spread as the larger side of the interval a
// chart draws: the range below six repetitions, the median's 95%
// confidence interval from six on, nothing for one.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		reps []float64
		want string
	}{
		{[]float64{100}, ""},
		{[]float64{100, 100, 100}, ""},
		{[]float64{90, 100, 110}, " ±10%"},
		// Lopsided: the error bar runs from 98 to 110, so +10% is its larger side.
		{[]float64{98, 100, 110}, " ±10%"},
		{[]float64{99, 100, 101}, " ±1.0%"},
		// Six repetitions: the interval runs from the lowest to the highest
		// order statistic, here 90 and 115, so ±15% of 100.
		{[]float64{90, 95, 100, 100, 105, 115}, " ±15%"},
	} {
		m := schema.NewMetric("x", schema.UnitCount, schema.HigherIsBetter, c.reps)
		if got := spread(m); got != c.want {
			t.Errorf("spread(%v) = %q, want %q", c.reps, got, c.want)
		}
	}
}

// The setup lists every measurement with its time, digests and runtime
// settings, a tuned server marked as tuned.
func TestSetupListsMeasurements(t *testing.T) {
	env := func(server, at, args string) schema.Environment {
		return schema.Environment{CPUModel: "x", CPUCount: 2, Kernel: "Linux", GoVersion: "go1.26", Platform: "linux_amd64", BuildConfig: "opt",
			MeasuredAt: at, Extra: map[string]string{schema.ExtraServer: server, schema.ExtraBinarySHA256: "0123456789abcdef", schema.ExtraGOGC: "100", schema.ExtraServerArgs: args}}
	}
	interleaved := env("go server", "2026-11-25T18:10:00Z", "")
	interleaved.Extra[schema.ExtraRivalPrefix+schema.ExtraServer] = "lisp server"
	interleaved.Extra[schema.ExtraRivalPrefix+schema.ExtraServerSHA256] = "fedcba9876543210"
	interleaved.Extra[schema.ExtraRivalPrefix+schema.ExtraServerArgs] = "-x"
	d := &Dataset{Suite: "routeguide", Measurements: []schema.Environment{
		env("go server", "2026-11-25T18:00:00Z", ""), env("lisp server", "2026-11-25T18:05:00Z", "-unary_inline"), interleaved,
	}}
	md := measurementsTable(d.Measurements).Markdown()
	for _, want := range []string{
		"| go server | Go (go1.26) | 2026-11-25T18:00:00Z | 0123456789ab | — | GOGC 100 |",
		"| lisp server | Go (go1.26) | 2026-11-25T18:05:00Z | 0123456789ab | — | GOGC 100; server started with -unary_inline (tuned) |",
		"| go server | Go (go1.26) | 2026-11-25T18:10:00Z | 0123456789ab | — | GOGC 100 |",
		"| lisp server (in turns with the row above) | Go (go1.26) | 2026-11-25T18:10:00Z | 0123456789ab | fedcba987654 | GOGC 100; server started with -x (tuned) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in:\n%s", want, md)
		}
	}
}

// The host's CPU pressure is shown when it changes, but a busier host is
// not a regression of the code.
func TestHostPressureIsNoRegression(t *testing.T) {
	file := func(pressure float64) *schema.File {
		f := schema.NewFile("cri", schema.Environment{CPUModel: "x", CPUCount: 2, Kernel: "Linux", GoVersion: "go", Platform: "linux_amd64", BuildConfig: "opt",
			Extra: oneRun.Extra})
		f.Results = []schema.Result{{Scenario: "list", Status: schema.StatusOK, Metrics: []schema.Metric{
			schema.NewMetric(schema.MetricCPUPressure, schema.UnitRatio, schema.LowerIsBetter, []float64{pressure, pressure + 0.01, pressure + 0.02, pressure, pressure + 0.01, pressure + 0.02}),
		}}}
		return f
	}
	c, err := Compare([]*schema.File{file(0.1)}, []*schema.File{file(0.9)})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Regressions(5); len(r) != 0 {
		t.Errorf("regressions %v from the host's pressure alone", r)
	}
	if v := c.Changes[0].Verdict(); v != "host" {
		t.Errorf("verdict %q, want host", v)
	}
}

// oneRun is the environment of results measured in turns in one run, the
// only ones Compare judges.
var oneRun = schema.Environment{Extra: map[string]string{schema.ExtraRunID: "one-run"}}
