package report

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// around returns six repetitions spread ±1% around v, so that two cells
// 10% apart differ significantly and two within 1% do not.
func around(v float64) []float64 {
	return []float64{v * 0.99, v * 0.995, v, v, v * 1.005, v * 1.01}
}

func goalRow(method string, perChunk int, latency, cpu []float64) Row {
	r := configRow(method, perChunk, 0)
	r.Metrics = []schema.Metric{
		schema.NewMetric("latency_p50", schema.UnitNanoseconds, schema.LowerIsBetter, latency),
		schema.NewMetric("total_cpu", schema.UnitSeconds, schema.LowerIsBetter, cpu),
	}
	return r
}

// serverRow is a cell of a goal about servers: its req/s, the servers'
// utilisation and, unless empty, the side that limited it.
func serverRow(impl string, containers int, reqps []float64, util float64, bottleneck string) Row {
	r := goalRow(impl, 0, around(1), around(1))
	utils := make([]float64, len(reqps))
	for i := range utils {
		utils[i] = util
	}
	r.Metrics = []schema.Metric{
		schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, reqps),
		schema.NewMetric(schema.MetricServerUtilisation, schema.UnitRatio, schema.HigherIsBetter, utils),
	}
	r.Parameters["containers"] = containers
	if bottleneck != "" {
		r.Parameters["bottleneck"] = bottleneck
	}
	return r
}

// serverGoal is a goal about servers (Bottleneck) on one limit, a
// configuration per containers count against "list".
func serverGoal(l RatioLimit) Goal {
	return Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		Limits: []RatioLimit{l}, Bottleneck: "bottleneck"}
}

// busyRow is serverRow with the servers fully busy, its repetitions
// around reqps.
func busyRow(impl string, containers int, reqps float64, bottleneck string) Row {
	return serverRow(impl, containers, around(reqps), 1, bottleneck)
}

var criGoal = Goal{
	Vary: []string{"method", "per_chunk"}, Baseline: "list", Names: map[string]string{"list": "List"},
	Limits: []RatioLimit{{Metric: "latency_p50", Max: 0.75}, {Metric: "total_cpu", Max: 1.1}},
	Config: map[string]string{"method": "chunked", "per_chunk": "16"},
}

func renderGoal(g Goal, rows ...Row) string {
	p := &Page{}
	g.Render(&Dataset{Rows: rows}, p)
	return p.md.String()
}

func wantAll(t *testing.T, md string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("missing %q in:\n%s", w, md)
		}
	}
}

// Only the configuration named in advance is judged: another that would
// meet the goal neither shows nor helps.
func TestGoalJudgesTheNamedConfiguration(t *testing.T) {
	list := goalRow("list", 0, around(100), around(10))
	md := renderGoal(criGoal, list,
		goalRow("chunked", 64, around(50), around(9)),  // would meet, not named
		goalRow("chunked", 16, around(60), around(12)), // fast, too much CPU
	)
	wantAll(t, md, "| chunked, per_chunk=16 | 0.60x (met; 95%: ≤ 0.6", "| 1.20x (not met; 95%: ≥ 1.1", "| not met |", "**Goal not met**")
	if strings.Contains(md, "per_chunk=64") {
		t.Errorf("a configuration not named was judged:\n%s", md)
	}
	md = renderGoal(criGoal, list, goalRow("chunked", 16, around(60), around(9)))
	wantAll(t, md, "| **met** |", "**Goal met** (of List's: Latency p50 at most 0.75x, Total CPU at most 1.1x) by chunked, per_chunk=16.")
}

// A figure at its bound, or too few repetitions, leave a limit undecided:
// the medians alone would have said "met".
func TestGoalNotDecided(t *testing.T) {
	list := goalRow("list", 0, around(100), around(10))
	atBound := goalRow("chunked", 16, around(74.5), around(10))
	wantAll(t, renderGoal(criGoal, list, atBound), "x (not decided; 95% each: ≥ 0.7", "**Goal not decided**", "not decided in 1 of 1 cells: chunked, per_chunk=16.")

	// With two repetitions a side, even the lowest of the four pairwise
	// ratios bounds nothing at 95% (P = 1/6); with three it does (1/20).
	few := goalRow("chunked", 16, []float64{50, 52}, []float64{9, 9})
	fewList := goalRow("list", 0, []float64{100, 102}, []float64{10, 10})
	wantAll(t, renderGoal(criGoal, fewList, few), "0.50x (not decided; no bound at 2+2 reps)", "**Goal not decided**")
	three := goalRow("chunked", 16, []float64{50, 51, 52}, []float64{9, 9, 9})
	threeList := goalRow("list", 0, []float64{100, 101, 102}, []float64{10, 10, 10})
	wantAll(t, renderGoal(criGoal, threeList, three), "0.50x (met; 95%: ≤ 0.52x, n=3+3)", "**Goal met**")
}

// Without Config, every configuration of every group must meet the limits,
// and the closing line names the cells that miss; a failed run misses.
func TestGoalEveryCell(t *testing.T) {
	g := Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		Limits: []RatioLimit{{Metric: "latency_p50", Min: 0.5}}}
	failed := goalRow("stream", 0, around(1), around(1))
	failed.Parameters["containers"] = 32
	failed.Status = schema.StatusError
	base32 := goalRow("list", 0, around(100), around(1))
	base32.Parameters["containers"] = 32
	md := renderGoal(g, goalRow("list", 0, around(100), around(1)), goalRow("stream", 0, around(60), around(1)), base32, failed)
	wantAll(t, md, "| containers=1024 | stream | 0.60x (met; 95%: ≥ 0.5", "| containers=32 | stream | — | not met |", "not met in 1 of 2 cells: containers=32: stream.")
}

// In keeps only the scenarios whose parameter is one of its values.
func TestGoalIn(t *testing.T) {
	g := Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		In:     map[string][]string{"containers": {"1024"}},
		Limits: []RatioLimit{{Metric: "latency_p50", Max: 0.75}}}
	base32 := goalRow("list", 0, around(100), around(1))
	base32.Parameters["containers"] = 32
	stream32 := goalRow("stream", 0, around(90), around(1))
	stream32.Parameters["containers"] = 32
	md := renderGoal(g, goalRow("list", 0, around(100), around(1)), goalRow("stream", 0, around(60), around(1)), base32, stream32)
	wantAll(t, md, "| containers=1024 | stream | 0.60x (met;", "**Goal met**")
	if strings.Contains(md, "containers=32") {
		t.Errorf("a scenario outside In was judged:\n%s", md)
	}
}

// With Bottleneck, a cell is judged only when the server limited it and its
// baseline: a cell a saturated client set shows its ratio, "not judged" and
// why, and its ratio is no verdict even when it would miss; but the goal it
// is a cell of is then not decided, never met by the cells that were judged.
func TestGoalJudgesOnlyServerBoundCells(t *testing.T) {
	g := serverGoal(RatioLimit{Metric: "req_per_s", Max: 0.75})
	md := renderGoal(g,
		busyRow("list", 1024, 100, "server"), busyRow("stream", 1024, 60, "server"),
		busyRow("list", 32, 100, "server"), busyRow("stream", 32, 200, "client"))
	wantAll(t, md, "| containers=1024 | stream | 0.60x (met; 95%: ≤ 0.6",
		"| containers=32 | stream | 2.00x (not met; 95%: ≥ 1.9", "| not judged (list: server-bound, stream: client-bound) |",
		"**Goal not decided (1 of 2 judged)** (", "1 of 2 cells not judged (the table says why): containers=32: stream.")
	md = renderGoal(g, busyRow("list", 32, 100, "neither"), busyRow("stream", 32, 60, "server"))
	wantAll(t, md, "| not judged (list: neither-bound, stream: server-bound) |", "**Goal not decided (0 of 1 judged)**")
}

// A goal over N cells is met only when all N were judged and met: met in
// the cells judged, with one left unjudged, it reads "not decided (k of N
// judged)"; a judged cell that misses still makes it not met.
func TestGoalIsNotMetByFewerCellsThanItJudges(t *testing.T) {
	g := serverGoal(RatioLimit{Metric: "req_per_s", Max: 0.75})
	md := renderGoal(g,
		busyRow("list", 1024, 100, "server"), busyRow("stream", 1024, 60, "server"),
		busyRow("list", 64, 100, "server"), busyRow("stream", 64, 60, "server"),
		busyRow("list", 32, 100, "client"), busyRow("stream", 32, 60, "client"))
	wantAll(t, md, "**Goal not decided (2 of 3 judged)** (of list's: req/s at most 0.75x).",
		"1 of 3 cells not judged (the table says why): containers=32: stream.")
	for _, wrong := range []string{"**Goal met**", "judged cells"} {
		if strings.Contains(md, wrong) {
			t.Errorf("met by fewer cells than judged (%q):\n%s", wrong, md)
		}
	}
	md = renderGoal(g,
		busyRow("list", 1024, 100, "server"), busyRow("stream", 1024, 60, "server"),
		busyRow("list", 32, 100, "client"), busyRow("stream", 32, 60, "client"))
	wantAll(t, md, "**Goal not decided (1 of 2 judged)**")
	md = renderGoal(g,
		busyRow("list", 1024, 100, "server"), busyRow("stream", 1024, 60, "server"),
		busyRow("list", 64, 100, "server"), busyRow("stream", 64, 60, "server"))
	wantAll(t, md, "**Goal met** (of list's: req/s at most 0.75x) in all 2 cells.")
}

// Bottleneck never hides a failure, and keeps verdicts that hold whatever
// limited the cell: a configuration at capacity below the bound, or a
// baseline at capacity already matched.
func TestGoalBottleneckKeepsCertainVerdicts(t *testing.T) {
	g := serverGoal(RatioLimit{Metric: "req_per_s", Min: 1})
	failed := busyRow("stream", 32, 1, "")
	failed.Status = schema.StatusError
	md := renderGoal(g,
		busyRow("list", 1024, 100, "client"), busyRow("stream", 1024, 50, "server"), // at capacity, below: not met
		busyRow("list", 64, 100, "server"), busyRow("stream", 64, 150, "client"), // baseline at capacity, matched: met
		busyRow("list", 32, 100, "server"), failed) // a failure is not met
	wantAll(t, md, "| containers=1024 | stream | 0.50x (not met; 95%: ≤ 0.5", "| containers=64 | stream | 1.50x (met; 95%: ≥ 1.4",
		"| containers=32 | stream | — | not met |", "**Goal not met**")
	if strings.Contains(md, "not judged") {
		t.Errorf("a certain verdict or a failure was left unjudged:\n%s", md)
	}
}

// A "both" bottleneck, the server saturated and its load generator too, is
// not the server's capacity: the load generator could have held the server
// back as much as the server held it, so such a cell is not judged.
func TestGoalDoesNotCountBothSaturatedAsServerCapacity(t *testing.T) {
	g := serverGoal(RatioLimit{Metric: "req_per_s", Min: 1})
	for _, c := range [][2]string{{"both", "both"}, {"both", "server"}} {
		md := renderGoal(g, busyRow("list", 32, 100, c[0]), busyRow("stream", 32, 150, c[1]))
		wantAll(t, md, "| not judged (list: "+c[0]+"-bound, stream: "+c[1]+"-bound) |", "**Goal not decided (0 of 1 judged)**")
	}
	// A server saturated alone is at its capacity; so a configuration whose
	// figure can only understate it (its load generator saturated too)
	// that already exceeds such a baseline is met.
	wantAll(t, renderGoal(g, busyRow("list", 32, 100, "server"), busyRow("stream", 32, 150, "server")), "**Goal met**")
	wantAll(t, renderGoal(g, busyRow("list", 32, 100, "server"), busyRow("stream", 32, 150, "both")), "**Goal met**")
}

// A cell whose bottleneck was not recorded (results from before it was, or a
// side whose CPU set was unknown) is not judged, and says why.
func TestGoalWithoutARecordedBottleneckIsNotJudged(t *testing.T) {
	g := serverGoal(RatioLimit{Metric: "req_per_s", Max: 0.75})
	base, r := serverRow("list", 32, around(100), 1, "server"), serverRow("stream", 32, around(50), 1, "")
	wantAll(t, renderGoal(g, base, r), "| not judged (bottleneck not recorded) |", "**Goal not decided (0 of 1 judged)**")
}

// A cell the goal names and nobody measured makes the goal not decided: it
// is never met by fewer cells than it names.
func TestGoalNamesItsCells(t *testing.T) {
	g := Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		Config: map[string]string{"method": "stream"},
		Cells:  map[string][]string{"containers": {"32", "1024"}},
		Limits: []RatioLimit{{Metric: "latency_p50", Max: 0.75}}}
	base32 := goalRow("list", 0, around(100), around(1))
	base32.Parameters["containers"] = 32 // its stream run is missing
	md := renderGoal(g, goalRow("list", 0, around(100), around(1)), goalRow("stream", 0, around(60), around(1)), base32)
	wantAll(t, md, "| containers=1024 | stream | 0.60x (met;", "| containers=32 | stream | — | not decided (not measured) |",
		"**Goal not decided (1 of 2 judged)**", "not decided in 1 of 2 cells: containers=32: stream.")
	md = renderGoal(g, goalRow("list", 0, around(100), around(1)), goalRow("stream", 0, around(60), around(1)))
	wantAll(t, md, "| containers=32 | stream | — | not decided (not measured) |", "**Goal not decided (1 of 2 judged)**")
}

// Two runs that both succeeded without recording the goal's metric leave
// the cell not decided, and say so; only a failed run is not met.
func TestGoalWithoutTheMetricIsNotDecided(t *testing.T) {
	g := Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		Limits: []RatioLimit{{Metric: "server_rss", Max: 2}}}
	md := renderGoal(g, goalRow("list", 0, around(100), around(1)), goalRow("stream", 0, around(60), around(1)))
	wantAll(t, md, "| — | not decided (no Server RSS) |", "**Goal not decided**")
}
