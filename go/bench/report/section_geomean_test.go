package report

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func sweepRow(impl, quota, bottleneck string, reqs ...float64) Row {
	return Row{Result: schema.Result{
		Scenario:   impl + "/" + quota,
		Status:     schema.StatusOK,
		Parameters: map[string]any{"impl": impl, "quota": quota, "bottleneck": bottleneck},
		Metrics:    []schema.Metric{schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, reqs)},
	}}
}

var sweepGeoMean = SweepGeoMean{
	Title: "At a glance", Cells: map[string][]string{"quota": {"0.25", "0.5", "1"}},
	Vary: []string{"impl"}, Baseline: "go", Config: map[string]string{"impl": "lisp"},
	Names: map[string]string{"go": "Go", "lisp": "Lisp"}, Metrics: []string{schema.MetricReqPerSec},
	Bottleneck: "bottleneck",
}

func renderSweep(s SweepGeoMean, rows ...Row) string {
	p := &Page{}
	s.Render(&Dataset{Rows: rows}, p)
	return p.md.String()
}

// The headline combines each cell's own estimate: 2x, 1x and 0.5x make 1x,
// with an interval over the cells as wide as they disagree; one round far
// off in one cell moves neither that cell's estimate nor the headline.
func TestSweepGeoMeanCombinesTheCellsEstimates(t *testing.T) {
	md := renderSweep(sweepGeoMean,
		sweepRow("go", "0.25", "server", 100, 100, 100, 100, 100, 100),
		sweepRow("lisp", "0.25", "server", 200, 202, 198, 200, 201, 20),
		sweepRow("go", "0.5", "server", 200, 200, 200, 200, 200, 200),
		sweepRow("lisp", "0.5", "server", 200, 199, 201, 200, 200, 200),
		sweepRow("go", "1", "server", 400, 400, 400, 400, 400, 400),
		sweepRow("lisp", "1", "server", 200, 199, 201, 200, 200, 200),
	)
	wantAll(t, md, "| req/s | 3 | 1.00x (", "| 0.50x to 2.00x |")
}

// A capacity metric leaves out a cell the load generator limited, and says
// so; a cell not measured leaves no mean at all.
func TestSweepGeoMeanCountsOnlyWhatItMayJudge(t *testing.T) {
	s := sweepGeoMean
	s.Capacity = []string{schema.MetricReqPerSec}
	md := renderSweep(s,
		sweepRow("go", "0.25", "server", 100, 100, 100),
		sweepRow("lisp", "0.25", "server", 200, 200, 200),
		sweepRow("go", "0.5", "server", 100, 100, 100),
		sweepRow("lisp", "0.5", "server", 150, 150, 150),
		sweepRow("go", "1", "client", 400, 400, 400),
		sweepRow("lisp", "1", "client", 400, 400, 400),
	)
	wantAll(t, md, "| req/s | 2 of 3 (not server-bound: quota=1) | 1.73x (")
	md = renderSweep(s,
		sweepRow("go", "0.25", "server", 100, 100, 100),
		sweepRow("lisp", "0.25", "server", 200, 200, 200),
		sweepRow("go", "1", "server", 400, 400, 400),
	)
	if !strings.Contains(md, "not given: 2 of 3 cells not measured (quota=0.5; quota=1)") {
		t.Errorf("a mean over one cell of three:\n%s", md)
	}
}
