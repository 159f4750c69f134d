package report

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func goalRow(method string, perChunk int, latency, cpu float64) Row {
	r := configRow(method, perChunk, latency)
	r.Metrics = append(r.Metrics, schema.NewMetric("total_cpu", schema.UnitSeconds, schema.LowerIsBetter, []float64{cpu}))
	return r
}

var criGoal = Goal{
	Vary: []string{"method", "per_chunk"}, Baseline: "list", Names: map[string]string{"list": "List"},
	Limits: []RatioLimit{{Metric: "latency_p50", Max: 0.75}, {Metric: "total_cpu", Max: 1.1}},
	Any:    true,
}

func renderGoal(g Goal, rows ...Row) string {
	p := &Page{}
	g.Render(&Dataset{Rows: rows}, p)
	return p.md.String()
}

// With Any, one configuration meeting every limit meets the goal; a
// configuration that meets one limit only does not count.
func TestGoalAnyConfiguration(t *testing.T) {
	md := renderGoal(criGoal,
		goalRow("list", 0, 100, 10),
		goalRow("stream", 0, 70, 12),   // fast but too much CPU
		goalRow("chunked", 16, 74, 11), // 0.74x latency at exactly 1.1x CPU
	)
	for _, want := range []string{"| stream | 0.70x | 1.20x | not met |", "| chunked, per_chunk=16 | 0.74x | 1.10x | **met** |", "**Goal met**", "by chunked, per_chunk=16."} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in:\n%s", want, md)
		}
	}
	md = renderGoal(criGoal, goalRow("list", 0, 100, 10), goalRow("stream", 0, 70, 12))
	if !strings.Contains(md, "**Goal not met**") {
		t.Errorf("one mode over the CPU limit met the goal:\n%s", md)
	}
}

// Without Any, every configuration of every group must meet the limits,
// and the closing line names the cells that miss; a failed run misses.
func TestGoalEveryCell(t *testing.T) {
	g := Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		Limits: []RatioLimit{{Metric: "latency_p50", Min: 0.5}}}
	failed := goalRow("stream", 0, 1, 1)
	failed.Parameters["containers"] = 32
	failed.Status = schema.StatusError
	base32 := goalRow("list", 0, 100, 1)
	base32.Parameters["containers"] = 32
	md := renderGoal(g, goalRow("list", 0, 100, 1), goalRow("stream", 0, 60, 1), base32, failed)
	for _, want := range []string{"| containers=1024 | stream | 0.60x | **met** |", "| containers=32 | stream | — | not met |", "in 1 of 2 cells: containers=32: stream."} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in:\n%s", want, md)
		}
	}
}
