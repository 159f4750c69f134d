package report

import (
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func measuredAt(host string, at time.Time) *schema.Environment {
	return &schema.Environment{Host: host, CPUModel: "cpu", CPUCount: 2, Kernel: "Linux 6",
		MeasuredAt: at.UTC().Format(time.RFC3339)}
}

func TestIncomparable(t *testing.T) {
	noon := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	here, there := "cpu=A;cpus=2", "cpu=B;cpus=2"
	same := measuredAt(here, noon)
	for _, c := range []struct {
		name string
		a, b *schema.Environment
		want string
	}{
		{"one file", same, same, ""},
		{"one host, 10 min apart", measuredAt(here, noon), measuredAt(here, noon.Add(10*time.Minute)), ""},
		{"one host, 45 min apart", measuredAt(here, noon), measuredAt(here, noon.Add(45*time.Minute)), "measured 45 min apart, over 30 min"},
		{"one host, 3 days apart", measuredAt(here, noon), measuredAt(here, noon.Add(-72*time.Hour)), "measured 3 d apart"},
		{"two hosts", measuredAt(here, noon), measuredAt(there, noon), "measured on different hosts"},
		// Files without a host key: their fingerprints decide.
		{"unkeyed, same fingerprint", measuredAt("", noon), measuredAt("", noon), ""},
		{"unkeyed, other kernel", measuredAt("", noon), &schema.Environment{CPUModel: "cpu", CPUCount: 2, Kernel: "Linux 7",
			MeasuredAt: noon.Format(time.RFC3339)}, "measured on different hosts"},
		{"no time recorded", measuredAt(here, noon), &schema.Environment{Host: here}, ""},
	} {
		got := Incomparable(Row{Env: c.a}, Row{Env: c.b})
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A pivot's ratio between results of different hosts is refused, and says why; within one host
// and window it carries its test.
func TestPivotRefusesARatioAcrossHosts(t *testing.T) {
	noon := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	row := func(impl string, clients int, v float64, env *schema.Environment) Row {
		return Row{Result: schema.Result{Scenario: impl, Status: schema.StatusOK,
			Parameters: map[string]any{"impl": impl, "clients": clients},
			Metrics:    []schema.Metric{schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, around(v))}},
			Env: env}
	}
	goEnv, lispEnv, elsewhere := measuredAt("h1", noon), measuredAt("h1", noon.Add(5*time.Minute)), measuredAt("h2", noon)
	d := &Dataset{Rows: []Row{
		row("go", 1, 100, goEnv), row("lisp", 1, 80, lispEnv),
		row("go", 10, 100, goEnv), row("lisp", 10, 80, elsewhere),
	}}
	p := &Page{}
	PivotTable{Rows: "clients", Cols: "impl", Metric: schema.MetricReqPerSec,
		Ratio: &PivotRatio{Num: "lisp", Den: "go", Factor: true}}.Render(d, p)
	md := p.md.String()
	wantAll(t, md, "| 1 | 100 ±1.0% | 80 ±1.0% | 0.80x (p=", "| 10 | 100 ±1.0% | 80 ±1.0% | — (measured on different hosts) |")
}

// A goal judges no cell whose baseline comes from another host, or from too long before.
func TestGoalRefusesCellsOfAnotherHostOrTime(t *testing.T) {
	noon := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	g := Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		Limits: []RatioLimit{{Metric: "latency_p50", Max: 0.75}}}
	at := func(r Row, containers int, env *schema.Environment) Row {
		r.Parameters["containers"], r.Env = containers, env
		return r
	}
	md := renderGoal(g,
		at(goalRow("list", 0, around(100), around(1)), 32, measuredAt("h1", noon)),
		at(goalRow("stream", 0, around(50), around(1)), 32, measuredAt("h2", noon)),
		at(goalRow("list", 0, around(100), around(1)), 64, measuredAt("h1", noon)),
		at(goalRow("stream", 0, around(50), around(1)), 64, measuredAt("h1", noon.Add(2*time.Hour))))
	wantAll(t, md, "| containers=32 | stream | — | not judged (measured on different hosts) |",
		"| containers=64 | stream | — | not judged (measured 2 h apart, over 30 min) |", "**Goal not decided (0 of 2 judged)**")
}

// A scenario table's ratio column and a comparison table's change refuse
// rows of another host as the pivot does.
func TestTablesRefuseRowsOfAnotherHost(t *testing.T) {
	noon := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	here, there := measuredAt("h1", noon), measuredAt("h2", noon)
	at := func(r Row, env *schema.Environment) Row { r.Env = env; return r }
	d := &Dataset{Rows: []Row{
		at(goalRow("list", 0, around(100), around(1)), here),
		at(goalRow("stream", 0, around(50), around(1)), there),
	}}
	p := &Page{}
	ScenarioTable{RowParams: []string{"method"}, Metrics: Metrics("latency_p50"),
		Ratio: &Ratio{Metric: "latency_p50"}}.Render(d, p)
	wantAll(t, p.md.String(), "— (measured on different hosts)")
	tbl := ComparisonTable(Metrics("latency_p50"), []Column{{Name: "List", Row: &d.Rows[0]}, {Name: "Stream", Row: &d.Rows[1]}}, 0.02)
	if got := tbl.Rows[0][3]; got != "— (measured on different hosts)" {
		t.Errorf("delta %q", got)
	}
}
