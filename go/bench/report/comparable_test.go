package report

import (
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func measuredAt(host string, at time.Time) *schema.Environment {
	return inRun(host, "", at)
}

// inRun is an environment of a run (schema.ExtraRunID) on a host.
func inRun(host, run string, at time.Time) *schema.Environment {
	env := &schema.Environment{Host: host, CPUModel: "cpu", CPUCount: 2, Kernel: "Linux 6",
		MeasuredAt: at.UTC().Format(time.RFC3339)}
	if run != "" {
		env.Extra = map[string]string{schema.ExtraRunID: run}
	}
	return env
}

// Results are related only when measured in turns in one run on one host:
// separate runs are refused however close in time, and results of a run
// that does not say which are refused too.
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
		{"one run, two files", inRun(here, "r1", noon), inRun(here, "r1", noon.Add(10*time.Minute)), ""},
		{"two runs, a minute apart", inRun(here, "r1", noon), inRun(here, "r2", noon.Add(time.Minute)), "measured in separate actions"},
		{"two runs, 3 days apart", inRun(here, "r1", noon), inRun(here, "r2", noon.Add(-72*time.Hour)), "measured in separate actions"},
		{"no run recorded", measuredAt(here, noon), measuredAt(here, noon), "measured in separate actions"},
		{"two hosts", inRun(here, "r1", noon), inRun(there, "r1", noon), "measured on different hosts"},
		{"one host key missing", inRun(here, "r1", noon), inRun("", "r1", noon), "measured on different hosts"},
		// Files without a host key: their fingerprints decide.
		{"unkeyed, same fingerprint", inRun("", "r1", noon), inRun("", "r1", noon), ""},
		{"unkeyed, other kernel", inRun("", "r1", noon), &schema.Environment{CPUModel: "cpu", CPUCount: 2, Kernel: "Linux 7",
			Extra: map[string]string{schema.ExtraRunID: "r1"}}, "measured on different hosts"},
	} {
		if got := Incomparable(Row{Env: c.a}, Row{Env: c.b}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A pivot's ratio between results of different hosts is refused, and says why; within one run
// it carries its test.
func TestPivotRefusesARatioAcrossHosts(t *testing.T) {
	noon := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	row := func(impl string, clients int, v float64, env *schema.Environment) Row {
		return Row{Result: schema.Result{Scenario: impl, Status: schema.StatusOK,
			Parameters: map[string]any{"impl": impl, "clients": clients},
			Metrics:    []schema.Metric{schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, around(v))}},
			Env: env}
	}
	goEnv, lispEnv, elsewhere := inRun("h1", "r1", noon), inRun("h1", "r1", noon.Add(5*time.Minute)), inRun("h2", "r1", noon)
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

// A goal judges no cell whose baseline comes from another host, or from another run.
func TestGoalRefusesCellsOfAnotherHostOrRun(t *testing.T) {
	noon := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	g := Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		Limits: []RatioLimit{{Metric: "latency_p50", Max: 0.75}}}
	at := func(r Row, containers int, env *schema.Environment) Row {
		r.Parameters["containers"], r.Env = containers, env
		return r
	}
	md := renderGoal(g,
		at(goalRow("list", 0, around(100), around(1)), 32, inRun("h1", "r1", noon)),
		at(goalRow("stream", 0, around(50), around(1)), 32, inRun("h2", "r1", noon)),
		at(goalRow("list", 0, around(100), around(1)), 64, inRun("h1", "r1", noon)),
		at(goalRow("stream", 0, around(50), around(1)), 64, inRun("h1", "r2", noon.Add(time.Minute))))
	wantAll(t, md, "| containers=32 | stream | — | not judged (measured on different hosts) |",
		"| containers=64 | stream | — | not judged (measured in separate actions) |", "**Goal not decided (0 of 2 judged)**")
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
