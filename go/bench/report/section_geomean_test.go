package report

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func sweepRow(impl, quota string, reqs ...float64) Row {
	return Row{Result: schema.Result{
		Scenario:   impl + "/" + quota,
		Status:     schema.StatusOK,
		Parameters: map[string]any{"impl": impl, "quota": quota},
		Metrics:    []schema.Metric{schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, reqs)},
	}}
}

var sweepGeoMean = SweepGeoMean{
	Title: "At a glance", Cells: map[string][]string{"quota": {"0.25", "1"}},
	Vary: []string{"impl"}, Baseline: "go", Config: map[string]string{"impl": "lisp"},
	Names: map[string]string{"go": "Go", "lisp": "Lisp"}, Metrics: []string{schema.MetricReqPerSec},
}

func renderSweep(rows ...Row) string {
	p := &Page{}
	sweepGeoMean.Render(&Dataset{Rows: rows}, p)
	return p.md.String()
}

// The geometric mean of 2x at one quota and 0.5x at the other is 1x: no
// cell stands for the sweep, and the range shows both.
func TestSweepGeoMeanOverEveryCell(t *testing.T) {
	md := renderSweep(
		sweepRow("go", "0.25", 100, 100, 100, 100, 100, 100),
		sweepRow("lisp", "0.25", 200, 202, 198, 200, 201, 199),
		sweepRow("go", "1", 400, 400, 400, 400, 400, 400),
		sweepRow("lisp", "1", 200, 199, 201, 200, 200, 200),
	)
	wantAll(t, md, "| req/s | 2 | 1.00x (95% each: ≥ ", "n=6 paired) | 0.50x to 2.00x |")
}

// A cell not measured leaves no mean: it would be another sweep's.
func TestSweepGeoMeanNeedsEveryCell(t *testing.T) {
	md := renderSweep(
		sweepRow("go", "0.25", 100, 100, 100),
		sweepRow("lisp", "0.25", 200, 200, 200),
		sweepRow("go", "1", 400, 400, 400),
	)
	if !strings.Contains(md, "not given: 1 of 2 cells not measured in full (quota=1)") {
		t.Errorf("a mean over one cell of two:\n%s", md)
	}
}
