package report

import (
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func boundRow(impl string, errors, p99 []float64) Row {
	return Row{Result: schema.Result{
		Scenario:   impl + "/longpoll",
		Status:     schema.StatusOK,
		Parameters: map[string]any{"impl": impl, "handler": "longpoll", "conns": 1},
		Metrics: []schema.Metric{
			schema.NewMetric(schema.MetricErrors, schema.UnitCount, schema.LowerIsBetter, errors),
			schema.NewMetric(schema.MetricLatencyP99, schema.UnitNanoseconds, schema.LowerIsBetter, p99),
		},
	}}
}

// longPollGoal is a goal of the handler-cost suite's kind: while long
// polls are held open, no cheap call fails and their p99 stays under 10 ms.
var longPollGoal = BoundGoal{
	Title:     "Goal: cheap calls beside long polls",
	Statement: "No cheap call fails and their latency p99 stays under 10 ms.",
	Where:     map[string]string{"handler": "longpoll"},
	Label:     []string{"impl", "conns"},
	Names:     ImplNames,
	Bounds: []Bound{
		{Metric: schema.MetricErrors, Below: 1, Total: true},
		{Metric: schema.MetricLatencyP99, Below: 10e6},
	},
	Context: Metrics(schema.MetricReqPerSec),
	Totals:  []string{schema.MetricPolls, schema.MetricPollErrors},
}

func renderBound(g BoundGoal, rows ...Row) string {
	p := &Page{}
	g.Render(&Dataset{Rows: rows}, p)
	return p.md.String()
}

func TestBoundGoalMet(t *testing.T) {
	md := renderBound(longPollGoal, boundRow("go", []float64{0, 0, 0}, []float64{1e6, 2e6, 3e6}))
	wantAll(t, md, "| Go, conns=1 | 0 |", "**Goal met** in all 1 cells.")
}

func TestBoundGoalNotMet(t *testing.T) {
	md := renderBound(longPollGoal,
		boundRow("go", []float64{0, 0, 0}, []float64{1e6, 2e6, 3e6}),
		boundRow("lisp", []float64{0, 1, 0}, []float64{1e6, 2e6, 3e6}),        // one failure
		boundRow("lisp_tuned", []float64{0, 0, 0}, []float64{5e6, 6e6, 12e6}), // median under, max over
	)
	wantAll(t, md, "| not met |", "| not decided |",
		"**Goal not met**: not met in 1 of 3 cells: Lisp, conns=1; not decided in 1 of 3 cells: Lisp, tuned, conns=1.")
}

func TestBoundGoalFailedCell(t *testing.T) {
	r := boundRow("lisp", []float64{0}, []float64{1e6})
	r.Status = schema.StatusError
	wantAll(t, renderBound(longPollGoal, r), "**Goal not met**")
	if md := renderBound(longPollGoal, Row{Result: schema.Result{Parameters: map[string]any{"handler": "fast"}}}); md != "" {
		t.Errorf("a goal with no cell of its own rendered:\n%s", md)
	}
}

// Failures in some repetitions only are summed, not hidden by a median of 0.
func TestTotalsShowEveryFailure(t *testing.T) {
	r := boundRow("lisp", []float64{0, 0, 0}, []float64{1e6, 1e6, 1e6})
	r.Metrics = append(r.Metrics, schema.NewMetric(schema.MetricPollErrors, schema.UnitCount, schema.LowerIsBetter, []float64{0, 3, 0}))
	wantAll(t, renderBound(longPollGoal, r), "| Poll errors, all repetitions |", "| 3 | **met** |")
	p := &Page{}
	PivotTable{
		Title: "Long polls failed", GroupBy: []string{"conns"}, Rows: "handler", Cols: "impl",
		Metric: schema.MetricPollErrors, Names: map[string]string{"longpoll": "Fast, beside long polls"}, Total: true,
	}.Render(&Dataset{Rows: []Row{r}}, p)
	wantAll(t, p.md.String(), "| Fast, beside long polls | 3 |")
}
