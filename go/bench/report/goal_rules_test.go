package report

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// latencyRow is a cell of a goal about servers' latency: its p99, the
// offered rate of an open loop (0: a closed loop) and its bottleneck.
func latencyRow(impl string, rate float64, p99 []float64, bottleneck string) Row {
	r := goalRow(impl, 0, around(1), around(1))
	r.Metrics = []schema.Metric{schema.NewMetric(schema.MetricLatencyP99, schema.UnitNanoseconds, schema.LowerIsBetter, p99)}
	r.Parameters["containers"], r.Parameters["bottleneck"] = 32, bottleneck
	if rate > 0 {
		r.Parameters["rate"] = rate
	}
	return r
}

// Latency has no "holds anyway": a closed-loop p99 is the queue the loop's
// own throughput builds, so no bottleneck makes it a verdict, and an open
// loop gives one only below both servers' capacity.
func TestGoalJudgesLatencyOnlyInAnOpenLoopBelowCapacity(t *testing.T) {
	g := serverGoal(RatioLimit{Metric: schema.MetricLatencyP99, Max: 1})
	for _, c := range []struct {
		name       string
		rate       float64
		base, conf string
		x          float64
		want       []string
	}{
		{"closed loop, both at capacity, worse", 0, "server", "server", 150,
			[]string{"| not decided (closed-loop latency) |", "**Goal not decided**"}},
		{"closed loop, configuration at capacity, worse", 0, "neither", "server", 150,
			[]string{"| not decided (closed-loop latency) |", "**Goal not decided**"}},
		{"closed loop, baseline at capacity, better", 0, "server", "client", 60,
			[]string{"| not decided (closed-loop latency) |", "**Goal not decided**"}},
		{"open loop at capacity", 1000, "neither", "server", 60,
			[]string{"| not decided (latency at a rate not below capacity: neither-bound and server-bound) |", "**Goal not decided**"}},
		{"open loop below capacity, better", 1000, "neither", "neither", 60,
			[]string{"0.60x (met; 95%: ≤ 0.6", "**Goal met**"}},
		{"open loop below capacity, worse", 1000, "neither", "neither", 150,
			[]string{"1.50x (not met; 95%: ≥ 1.4", "**Goal not met**"}},
	} {
		md := renderGoal(g, latencyRow("list", c.rate, around(100), c.base), latencyRow("stream", c.rate, around(c.x), c.conf))
		for _, w := range c.want {
			if !strings.Contains(md, w) {
				t.Errorf("%s: missing %q in:\n%s", c.name, w, md)
			}
		}
	}
}

// A throughput bound must hold over the servers' headroom: a req/s ratio of
// at least 1.09x over a baseline only 86% busy is at least 0.94x of what
// that baseline could do, so "at least 1x" is not met by it (nor missed).
func TestGoalThroughputBoundSurvivesTheBaselinesHeadroom(t *testing.T) {
	g := serverGoal(RatioLimit{Metric: schema.MetricReqPerSec, Min: 1})
	md := renderGoal(g, serverRow("list", 32, around(100), 0.86, "server"), serverRow("stream", 32, around(110), 1, "server"))
	wantAll(t, md, "| 1.10x (not decided; 95% each: ≥ 0.94x and ≤ 1.11x, n=6+6; bounds over the servers' headroom, 86% and 100% busy) |",
		"**Goal not decided**")
	// The same ratio over a baseline with no headroom left is met.
	md = renderGoal(g, serverRow("list", 32, around(100), 1, "server"), serverRow("stream", 32, around(110), 1, "server"))
	wantAll(t, md, "1.10x (met; 95%: ≥ 1.09x, n=6+6) |", "**Goal met**")
	// The configuration's headroom widens the other bound: 0.90x of a busy
	// baseline by a configuration 80% busy could be 1.13x of its capacity.
	md = renderGoal(g, serverRow("list", 32, around(100), 1, "server"), serverRow("stream", 32, around(90), 0.8, "server"))
	wantAll(t, md, "0.90x (not decided;", "**Goal not decided**")
	// A server whose utilisation is unknown bounds nothing.
	noUtil := serverRow("stream", 32, around(200), 1, "server")
	noUtil.Metrics = noUtil.Metrics[:1]
	md = renderGoal(g, serverRow("list", 32, around(100), 1, "server"), noUtil)
	wantAll(t, md, "| not decided (no Server utilisation) |")
}

// "Not met" in one of several cells, each tested at 5%, must survive Holm's
// correction for their number: a p-value of 0.032 is not met alone, and
// not among two tests (the smallest must be at most 0.025); a far miss is.
func TestGoalNotMetAcrossCellsIsHolmCorrected(t *testing.T) {
	g := Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		Limits: []RatioLimit{{Metric: "latency_p50", Max: 0.75}}}
	cell := func(containers int, base, x []float64) []Row {
		b, r := goalRow("list", 0, base, around(1)), goalRow("stream", 0, x, around(1))
		b.Parameters["containers"], r.Parameters["containers"] = containers, containers
		return []Row{b, r}
	}
	flat := []float64{100, 100, 100, 100, 100, 100}
	nearMiss := []float64{74, 76, 77, 78, 79, 80} // 6 of 36 pairwise ratios at or below 0.75: p = 0.032
	alone := renderGoal(g, cell(32, flat, nearMiss)...)
	wantAll(t, alone, "(not met; 95%: ≥ 0.76x, n=6+6) | not met |", "**Goal not met**")
	two := renderGoal(g, append(cell(32, flat, nearMiss), cell(64, flat, around(50))...)...)
	wantAll(t, two, "| containers=32 | stream | 0.77x (not decided; 95% each: ≥ 0.76x and ≤ 0.79x, n=6+6) | not decided (not met alone (p=0.032), not after Holm's correction over 2 tests) |",
		"**Goal not decided**")
	far := renderGoal(g, append(cell(32, flat, around(150)), cell(64, flat, around(50))...)...)
	wantAll(t, far, "| containers=32 | stream | 1.50x (not met; 95%: ≥ 1.4", "**Goal not met**")
}

// A goal whose suite was measured without the pair it judges (here a file
// with no chunked rows) is shown as not decided, never left out: a server
// missing from the file cannot make its goal disappear.
func TestGoalWithoutItsConfigurationsIsNotDecided(t *testing.T) {
	md := renderGoal(criGoal, goalRow("list", 0, around(100), around(1)))
	wantAll(t, md, "**Goal not decided (0 judged)**", "no cell of chunked against List was measured")
	if md := renderGoal(criGoal); md != "" {
		t.Errorf("a goal over no data at all rendered:\n%s", md)
	}
}

// A goal that limits CPU shows each cell's server RSS against its
// baseline's beside the verdict, and their range in the summary: CPU saved
// by holding more memory is visible where the CPU is judged.
func TestCPUGoalsShowTheMemoryRatio(t *testing.T) {
	withRSS := func(r Row, rss float64) Row {
		r.Metrics = append(r.Metrics, schema.NewMetric(schema.MetricServerRSS, schema.UnitBytes, schema.LowerIsBetter, around(rss)))
		return r
	}
	g := Goal{Vary: []string{"method"}, Baseline: "list", Names: map[string]string{"list": "List"},
		Limits: []RatioLimit{{Metric: schema.MetricTotalCPU, Max: 1.1}}}
	md := renderGoal(g, withRSS(goalRow("list", 0, around(100), around(1)), 100<<20),
		withRSS(goalRow("stream", 0, around(100), around(0.5)), 400<<20))
	wantAll(t, md, "| Server RSS / List |", "| 4.00x |", "Server RSS beside these CPU figures: 4.00x List's.")
	// A latency goal says nothing of memory.
	lat := Goal{Vary: []string{"method"}, Baseline: "list", Limits: []RatioLimit{{Metric: "latency_p50", Max: 1}}}
	md = renderGoal(lat, withRSS(goalRow("list", 0, around(100), around(1)), 100<<20),
		withRSS(goalRow("stream", 0, around(90), around(1)), 400<<20))
	if strings.Contains(md, "Server RSS") {
		t.Errorf("a latency goal shows memory:\n%s", md)
	}
}

// Two servers that sized their runtimes to different parallelism (one
// counted more CPUs than the other) are not compared: the cell is not
// judged, and says why.
func TestServersWithUnequalParallelismAreNotJudged(t *testing.T) {
	withCPUs := func(r Row, n float64) Row {
		r.Metrics = append(r.Metrics, schema.NewMetric(schema.MetricServerParallelism, schema.UnitCount, schema.LowerIsBetter, []float64{n, n, n, n, n, n}))
		return r
	}
	g := Goal{Vary: []string{"method"}, Baseline: "list", Limits: []RatioLimit{{Metric: "latency_p50", Max: 1}}}
	md := renderGoal(g, withCPUs(goalRow("list", 0, around(100), around(1)), 1),
		withCPUs(goalRow("stream", 0, around(50), around(1)), 2))
	wantAll(t, md, "not judged (the servers ran with 1 and 2 CPUs)")
	md = renderGoal(g, withCPUs(goalRow("list", 0, around(100), around(1)), 1),
		goalRow("stream", 0, around(50), around(1)))
	wantAll(t, md, "not judged (only one server said its parallelism)")
	md = renderGoal(g, withCPUs(goalRow("list", 0, around(100), around(1)), 2),
		withCPUs(goalRow("stream", 0, around(50), around(1)), 2))
	wantAll(t, md, "**Goal met**")
}
