package main

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// BenchmarkSerialization is the micro-benchmark under `go test -bench`:
// go test ./go/kcpbench -run '^$' -bench Serialization -benchmem
func BenchmarkSerialization(b *testing.B) {
	cases, err := codecCases(serialObjects, allMediaTypes)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cases {
		b.Run(serialScenario(c), loopCase(c))
	}
}

// Every format round-trips both objects (codecCases checks it).
func TestCodecCasesRoundTrip(t *testing.T) {
	cases, err := codecCases(serialObjects, allMediaTypes)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(cases), len(serialObjects)*len(allMediaTypes)*2; got != want {
		t.Fatalf("%d cases, want %d", got, want)
	}
	for _, c := range cases {
		if c.Encoded == 0 {
			t.Errorf("%s: encoded size 0", serialScenario(c))
		}
		if err := c.Run(); err != nil {
			t.Errorf("%s: %v", serialScenario(c), err)
		}
	}
}

// The binary's serialization results are real measurements: every case ran
// its operation, at one nanosecond or more per op (a body that never loops
// prints 0.0000240 ns/op), and reports bytes, allocations and the encoded size.
func TestSerializationResultsAreAtLeastOneNsPerOp(t *testing.T) {
	cases, err := codecCases(serialObjects, allMediaTypes)
	if err != nil {
		t.Fatal(err)
	}
	if err := setBenchtime("50x"); err != nil {
		t.Fatal(err)
	}
	results := runSerialization(cases, 2, "50x", nil)
	if len(results) != len(cases) {
		t.Fatalf("%d results for %d cases", len(results), len(cases))
	}
	for _, r := range results {
		if r.Status != schema.StatusOK {
			t.Errorf("%s: %s: %s", r.Scenario, r.Status, r.Error)
			continue
		}
		got := map[string]schema.Metric{}
		for _, m := range r.Metrics {
			got[m.Name] = m
		}
		ns := got[schema.MetricNsPerOp]
		if len(ns.Reps) != 2 {
			t.Errorf("%s: %d ns/op repetitions, want 2", r.Scenario, len(ns.Reps))
		}
		for _, v := range ns.Reps {
			if v < minNsPerOp {
				t.Errorf("%s: %v ns/op, below %v", r.Scenario, v, minNsPerOp)
			}
		}
		if cpu := got[schema.MetricClientCPUPerOp]; len(cpu.Reps) != 2 || cpu.Max <= 0 {
			t.Errorf("%s: CPU per op %v, want 2 measured repetitions", r.Scenario, cpu.Reps)
		}
		if n := got[schema.MetricOps]; n.Min < 50 {
			t.Errorf("%s: ran %v ops, want at least the 50 asked for", r.Scenario, n.Min)
		}
		if got[schema.MetricEncodedBytes].Min <= 0 {
			t.Errorf("%s: no encoded size", r.Scenario)
		}
		if _, ok := got[schema.MetricAllocsPerOp]; !ok {
			t.Errorf("%s: no allocs/op", r.Scenario)
		}
	}
}

func TestFloorRejectsSubNanosecondFigures(t *testing.T) {
	if err := checkFloor([]float64{12.5, 0.0000240}); err == nil || !strings.Contains(err.Error(), "below 1 ns/op") {
		t.Errorf("checkFloor(0.0000240) = %v", err)
	}
	if err := checkFloor([]float64{1, 500}); err != nil {
		t.Errorf("checkFloor(1, 500) = %v", err)
	}
}
