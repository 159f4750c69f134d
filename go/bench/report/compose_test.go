package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// The wording of the CRI List vs Stream tables (docs/prior-results.md).
func TestDelta(t *testing.T) {
	same := DefaultSameWithin
	tests := []struct {
		name   string
		a, b   float64
		better schema.Better
		w      Wording
		want   string
	}{
		{"faster", 3.50, 2.60, schema.LowerIsBetter, DefaultWording("wall_time", "s"), "**Stream 26% faster**"},
		{"more CPU", 4.51, 7.07, schema.LowerIsBetter, DefaultWording("total_cpu", "s"), "Stream 57% more CPU"},
		{"cores", 1.29, 2.72, schema.LowerIsBetter, DefaultWording("cpu_per_wall", "ratio"), "Stream uses 2.1x more cores"},
		{"less memory", 880, 538, schema.LowerIsBetter, DefaultWording("bytes_per_op", "B/op"), "**Stream 39% less memory" + "**"},
		{"same", 14271, 14563, schema.LowerIsBetter, DefaultWording("allocs_per_op", "allocs/op"), "~Same (+2%)"},
		{"exactly same", 5, 5, schema.LowerIsBetter, Wording{}, "~Same"},
		{"higher throughput", 100, 150, schema.HigherIsBetter, DefaultWording("req_per_s", "req/s"), "**Stream 50% higher**"},
		{"lower throughput", 100, 50, schema.HigherIsBetter, DefaultWording("req_per_s", "req/s"), "Stream 50% lower"},
		{"from zero", 0, 5, schema.LowerIsBetter, Wording{}, missing},
	}
	for _, tt := range tests {
		if got := Delta(tt.a, tt.b, tt.better, "Stream", tt.w, same); got != tt.want {
			t.Errorf("%s: Delta(%v, %v) = %q, want %q", tt.name, tt.a, tt.b, got, tt.want)
		}
	}
}

// The prior RouteGuide figures (docs/prior-results.md): Go vs Lisp unary req/s.
func TestRatioColumn(t *testing.T) {
	got := RatioColumn([]float64{12, 120, 1179, math.NaN()}, 9214, schema.HigherIsBetter, RatioPercent)
	want := []string{"0.130%", "1.30%", "12.8%", missing}
	if !slices.Equal(got, want) {
		t.Errorf("percent: %q, want %q", got, want)
	}
	got = RatioColumn([]float64{12, 9214, 18428}, 9214, schema.HigherIsBetter, RatioSlowdown)
	want = []string{"768x slower", "same", "2.0x faster"}
	if !slices.Equal(got, want) {
		t.Errorf("slowdown: %q, want %q", got, want)
	}
	// For a lower-is-better metric a larger value is the slower one.
	got = RatioColumn([]float64{4289, 36057}, 4289, schema.LowerIsBetter, RatioSlowdown)
	want = []string{"same", "8.4x slower"}
	if !slices.Equal(got, want) {
		t.Errorf("slowdown, lower is better: %q, want %q", got, want)
	}
	got = RatioColumn([]float64{3077}, 4289, schema.LowerIsBetter, RatioFactor)
	if want := []string{"0.72x"}; !slices.Equal(got, want) {
		t.Errorf("factor: %q, want %q", got, want)
	}
}

// Efficiencies of the prior RouteGuide figures (docs/prior-results.md): Go 33.5% / 25.4% / 8.5%.
func TestScalingTable(t *testing.T) {
	tab := ScalingTable("Implementation", "clients", []Series{
		{Name: "Go", X: []float64{1, 10, 100}, Y: []float64{9214, 30850, 78471}},
		{Name: "Common Lisp", X: []float64{1, 10, 100}, Y: []float64{11.6, 120, 1179.2}},
		{Name: "Partial", X: []float64{1, 100}, Y: []float64{10, 500}},
	})
	wantHeader := []string{"Implementation", "1→10 clients", "10→100 clients", "1→100 clients"}
	if !slices.Equal(tab.Header, wantHeader) {
		t.Fatalf("header %q, want %q", tab.Header, wantHeader)
	}
	want := [][]string{
		{"Go", "33.5%", "25.4%", "**8.52%**"},
		{"Common Lisp", "103%", "98.3%", "**102%**"},
		{"Partial", missing, missing, "**50.0%**"},
	}
	for i := range want {
		if !slices.Equal(tab.Rows[i], want[i]) {
			t.Errorf("row %d: %q, want %q", i, tab.Rows[i], want[i])
		}
	}
}

func TestMatrixTableMarkdown(t *testing.T) {
	tab := MatrixTable("RPC", []string{"unary", "bidi"}, []string{"1", "10"}, func(r, c string) string {
		return r + "@" + c
	})
	got := tab.Markdown()
	want := "| RPC | 1 | 10 |\n|---|---|---|\n| unary | unary@1 | unary@10 |\n| bidi | bidi@1 | bidi@10 |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	tab.Rows[0][1] = "a|b"
	if !strings.Contains(tab.Markdown(), `a\|b`) {
		t.Error("a pipe in a cell must be escaped")
	}
}

func TestComparisonTableWithThreeColumns(t *testing.T) {
	row := func(wall float64) *Row {
		return &Row{Result: schema.Result{Scenario: "x", Status: schema.StatusOK, Metrics: []schema.Metric{
			schema.NewMetric("wall_time", schema.UnitSeconds, schema.LowerIsBetter, []float64{wall}),
		}}}
	}
	tab := ComparisonTable(Metrics("wall_time", "absent"), []Column{
		{"List", row(6.78)}, {"Stream c=16", row(5.18)}, {"Stream c=256", row(7.0)}, {"Gone", nil},
	}, DefaultSameWithin)
	want := []string{"Wall time", "6.78 s", "**5.18 s** (-24%)", "7.00 s (+3%)", missing}
	if len(tab.Rows) != 1 || !slices.Equal(tab.Rows[0], want) {
		t.Errorf("rows %q, want one row %q", tab.Rows, want)
	}
}
