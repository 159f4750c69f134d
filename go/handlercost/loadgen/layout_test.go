package main

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Each suite's layout is linked into this program, and its goal names
// every cell the default kinds measure, under its own display names: a
// kind renamed here without the layout would leave the goal "not
// measured".
// The goals of each suite name its own placement.
func TestDefaultKindsAreTheGoalsCells(t *testing.T) {
	for _, name := range []string{suite, sharedCPUsSuite} {
		t.Run(name, func(t *testing.T) {
			md := goalsOfDefaultKinds(t, name)
			shared := strings.Contains(md, "which the load generator shares (-cpus off)")
			pinned := strings.Contains(md, "each server pinned to half of the CPUs")
			if shared != (name == sharedCPUsSuite) || pinned == shared {
				t.Errorf("suite %s: goals name the shared placement %v, the pinned one %v", name, shared, pinned)
			}
		})
	}
}

// goalsOfDefaultKinds renders results of every cell the default kinds
// measure under the named suite, checks that its goals find them, and
// returns the report.
func goalsOfDefaultKinds(t *testing.T, name string) string {
	if _, ok := report.RegisteredSuite(name); !ok {
		t.Fatalf("suite %s has no registered layout in this program", name)
	}
	kinds, err := parseKinds(defaultKinds)
	if err != nil {
		t.Fatal(err)
	}
	f := schema.NewFile(name, schema.Environment{CPUCount: 2, Platform: "linux_amd64"})
	for _, k := range kinds {
		for _, impl := range []string{"go", "lisp", "go_tuned", "lisp_tuned"} {
			for _, conns := range []int{4, 1} {
				f.Results = append(f.Results, schema.Result{
					Scenario:   scenario{kind: k, conns: conns}.name(impl),
					Status:     schema.StatusOK,
					Parameters: map[string]any{"impl": impl, "client": "go", "handler": k.name(), "conns": conns},
					Metrics: []schema.Metric{
						schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, []float64{1000}),
						schema.NewMetric(schema.MetricLatencyP99, schema.UnitNanoseconds, schema.LowerIsBetter, []float64{1e6}),
					},
				})
			}
		}
	}
	md, err := report.Markdown([]*schema.File{f})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if strings.Contains(md, "handler="+k.name()+", conns=4 | Lisp | — ") {
			t.Errorf("the goal did not find the measured cell of %s:\n%s", k.name(), md)
		}
		if strings.Contains(md, "| "+k.name()+" |") {
			t.Errorf("kind %s has no display name in the layout", k.name())
		}
	}
	// The defaults' goal misses only the long-poll mix; the tuned one names Fast only.
	if n := strings.Count(md, "not decided (not measured)"); n != 2 {
		t.Errorf("%d cells not measured, want the long-poll mix's 2:\n%s", n, md)
	}
	if !strings.Contains(md, "| handler=fast, conns=4 | Lisp, tuned | 1.00x") {
		t.Errorf("the tuned goal did not judge the tuned servers:\n%s", md)
	}
	return md
}
