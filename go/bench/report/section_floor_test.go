package report

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func floorRow(method, codec string, cpu ...float64) Row {
	return floorRowIn(map[string]any{}, method, codec, cpu...)
}

func floorRowIn(group map[string]any, method, codec string, cpu ...float64) Row {
	params := map[string]any{"method": method, "codec": codec}
	for k, v := range group {
		params[k] = v
	}
	return Row{Result: schema.Result{
		Scenario:   method + "/" + codec,
		Status:     schema.StatusOK,
		Parameters: params,
		Metrics:    []schema.Metric{schema.NewMetric(schema.MetricTotalCPU, schema.UnitNanoseconds, schema.LowerIsBetter, cpu)},
	}}
}

var floorSplit = FloorSplit{
	Title: "Above the floor", Variant: "codec", Floor: "floor",
	Vary: []string{"method"}, Baseline: "list", Names: map[string]string{"list": "List", "stream": "Stream"},
	Metric: schema.MetricTotalCPU,
	Goals:  []FloorGoal{{Config: map[string]string{"method": "stream"}, Max: 1.1}},
}

func renderFloor(rows ...Row) string {
	p := &Page{}
	floorSplit.Render(&Dataset{Rows: rows}, p)
	return p.md.String()
}

// The part above the floor is each round's figure less its floor's, and a
// limit on the whole says how much of it the floor leaves.
func TestFloorSplit(t *testing.T) {
	md := renderFloor(
		floorRow("list", "criwire", 100, 102, 98, 101, 99, 100),
		floorRow("stream", "criwire", 130, 131, 129, 132, 128, 130),
		floorRow("list", "floor", 10, 10, 10, 10, 10, 10),
		floorRow("stream", "floor", 25, 25, 25, 25, 25, 25),
	)
	// Above the floor: List 90, Stream 105 (1.17x). Stream at most 1.1x of
	// List's 100 leaves 110 - 25 = 85 above its floor, 0.94x of List's 90.
	wantAll(t, md, "| List | 100 ns | 10.0 ns | 90.0 ns | 1.00x |", "| Stream | 130 ns | 25.0 ns | 105 ns | 1.17x",
		"Given Stream's floor, it costs at most 1.1x List's Total CPU only if its part above the floor is at most 85.0 ns, 0.94x List's (medians over the rounds): less than List spends above its own floor. It measured 1.17x (95% each: ≥ ")
	if strings.Contains(md, "codec=floor") {
		t.Errorf("the floor got a table of its own:\n%s", md)
	}
}

// Without floor figures, or without the baseline, there is nothing to split.
func TestFloorSplitNeedsTheFloor(t *testing.T) {
	if md := renderFloor(floorRow("list", "criwire", 100), floorRow("stream", "criwire", 130)); md != "" {
		t.Errorf("rendered without a floor:\n%s", md)
	}
	if md := renderFloor(floorRow("stream", "criwire", 130), floorRow("stream", "floor", 25)); md != "" {
		t.Errorf("rendered without a baseline:\n%s", md)
	}
}

// Each configuration is split by the floor of its own group, not the
// first floor row of its method.
func TestFloorSplitPairsWithinTheGroup(t *testing.T) {
	s := floorSplit
	s.GroupBy = []string{"annotations"}
	a0, a32 := map[string]any{"annotations": 0}, map[string]any{"annotations": 32}
	p := &Page{}
	s.Render(&Dataset{Rows: []Row{
		floorRowIn(a0, "list", "floor", 1, 1, 1),
		floorRowIn(a0, "stream", "floor", 2, 2, 2),
		floorRowIn(a32, "list", "floor", 10, 10, 10),
		floorRowIn(a32, "stream", "floor", 25, 25, 25),
		floorRowIn(a0, "list", "criwire", 5, 5, 5),
		floorRowIn(a0, "stream", "criwire", 7, 7, 7),
		floorRowIn(a32, "list", "criwire", 100, 100, 100),
		floorRowIn(a32, "stream", "criwire", 130, 130, 130),
	}}, p)
	wantAll(t, p.md.String(), "| Stream | 7.00 ns | 2.00 ns | 5.00 ns |", "| Stream | 130 ns | 25.0 ns | 105 ns |")
}
