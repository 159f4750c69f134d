package report

import (
	"math"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// A pivot's ratio column gives the ratio a goal judges, not the ratio of
// the medians: paired by round where the servers took turns, with the
// signed-rank test, so a table and a goal never disagree on one pair of
// cells.
func TestPivotRatioIsTheGoalsEstimate(t *testing.T) {
	turns := &schema.Environment{Extra: map[string]string{schema.ExtraRepsPaired: schema.PairedByRound}}
	goRounds := []float64{100, 80, 120, 90, 110, 75}
	lisp := []float64{90, 88, 132, 99, 121, 82.5} // 0.9x the first round, 1.1x the others
	row := func(impl string, reps []float64, env *schema.Environment) Row {
		return Row{Result: schema.Result{Scenario: impl, Status: schema.StatusOK,
			Parameters: map[string]any{"impl": impl, "clients": 1},
			Metrics:    []schema.Metric{schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, reps)}},
			Env: env}
	}
	render := func(env *schema.Environment) string {
		p := &Page{}
		PivotTable{Rows: "clients", Cols: "impl", Metric: schema.MetricReqPerSec,
			Ratio: &PivotRatio{Num: "lisp", Den: "go", Factor: true}}.Render(
			&Dataset{Rows: []Row{row("go", goRounds, env), row("lisp", lisp, env)}}, p)
		return p.md.String()
	}
	// Medians 94.5 and 95: 0.99x by their ratio, though five rounds of six
	// are 1.1x.
	wantAll(t, render(turns), "| 1 | 95 ±26% | 94.5 ±40% | 1.10x ~ (p=0.438 n=6 paired) |")
	wantAll(t, render(&schema.Environment{}), "| 1 | 95 ±26% | 94.5 ±40% | 1.10x ~ (p=0.615 n=6) |")
}

// Three rounds in turns are too few for a paired bound (the signed-rank
// test's smallest one-sided p is 1/8): the goal judges them unpaired, three
// a side, which has one.
func TestFewRoundsAreJudgedUnpaired(t *testing.T) {
	turns := &schema.Environment{Extra: map[string]string{schema.ExtraRepsPaired: schema.PairedByRound}}
	g := Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		Limits: []RatioLimit{{Metric: "latency_p50", Max: 0.75}}}
	b, x := goalRow("list", 0, []float64{100, 101, 102}, around(1)[:3]), goalRow("stream", 0, []float64{50, 51, 52}, around(1)[:3])
	b.Env, x.Env = turns, turns
	wantAll(t, renderGoal(g, b, x), "0.50x (met; 95%: ≤ 0.52x, n=3+3)", "**Goal met**")
}

// A zero baseline has no ratio: the cell reads "—", never "+Inf".
func TestZeroBaselineHasNoRatio(t *testing.T) {
	zero := schema.NewMetric(schema.MetricErrors, schema.UnitCount, schema.LowerIsBetter, []float64{0, 0, 0})
	some := schema.NewMetric(schema.MetricErrors, schema.UnitCount, schema.LowerIsBetter, []float64{1, 2, 3})
	if ratio, _ := tableRatio(some, zero, false); !math.IsNaN(ratio) {
		t.Errorf("ratio over a zero baseline: %v, want NaN", ratio)
	}
}
