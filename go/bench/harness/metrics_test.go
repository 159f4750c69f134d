package harness

import (
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func TestMetricsFromKnownReps(t *testing.T) {
	reps := []Rep{
		{Wall: 2 * time.Second, ClientCPU: CPUTimes{User: time.Second, System: time.Second}, Ops: 1000, Msgs: 1000, AllocBytes: 4096000, Allocs: 20000, Latency: Percentiles{P50: 2 * time.Millisecond, P99: 5 * time.Millisecond}},
		{Wall: 4 * time.Second, ClientCPU: CPUTimes{User: 3 * time.Second, System: time.Second}, Ops: 1000, Msgs: 1000, AllocBytes: 2048000, Allocs: 10000, Latency: Percentiles{P50: 4 * time.Millisecond, P99: 9 * time.Millisecond}},
		{Wall: 3 * time.Second, ClientCPU: CPUTimes{User: 2 * time.Second, System: 1 * time.Second}, Ops: 1000, Msgs: 1000, AllocBytes: 3072000, Allocs: 15000, Latency: Percentiles{P50: 3 * time.Millisecond, P99: 7 * time.Millisecond}},
	}
	got := map[string]schema.Metric{}
	for _, m := range Metrics(reps) {
		got[m.Name] = m
	}
	for _, name := range []string{schema.MetricServerCPU, schema.MetricServerCPUPerOp} {
		if _, ok := got[name]; ok {
			t.Errorf("%s reported without a server CPU source", name)
		}
	}
	if _, ok := got[schema.MetricMsgPerSec]; ok {
		t.Error("msg_per_s reported for one message per op")
	}
	for _, c := range []struct {
		name           string
		unit           string
		better         schema.Better
		reps           []float64
		min, med, maxV float64
	}{
		{schema.MetricWallTime, "s", schema.LowerIsBetter, []float64{2, 4, 3}, 2, 3, 4},
		{schema.MetricReqPerSec, "req/s", schema.HigherIsBetter, []float64{500, 250, 1000.0 / 3}, 250, 1000.0 / 3, 500},
		{schema.MetricNsPerOp, "ns/op", schema.LowerIsBetter, []float64{2e6, 4e6, 3e6}, 2e6, 3e6, 4e6},
		{schema.MetricTotalCPU, "s", schema.LowerIsBetter, []float64{2, 4, 3}, 2, 3, 4},
		{schema.MetricClientCPUPerOp, "ns/op", schema.LowerIsBetter, []float64{2e6, 4e6, 3e6}, 2e6, 3e6, 4e6},
		{schema.MetricCPUPerWall, "ratio", schema.LowerIsBetter, []float64{1, 1, 1}, 1, 1, 1},
		{schema.MetricLatencyP50, "ns", schema.LowerIsBetter, []float64{2e6, 4e6, 3e6}, 2e6, 3e6, 4e6},
		{schema.MetricBytesPerOp, "B/op", schema.LowerIsBetter, []float64{4096, 2048, 3072}, 2048, 3072, 4096},
		{schema.MetricAllocsPerOp, "allocs/op", schema.LowerIsBetter, []float64{20, 10, 15}, 10, 15, 20},
	} {
		m, ok := got[c.name]
		if !ok {
			t.Errorf("%s missing", c.name)
			continue
		}
		if m.Unit != c.unit || m.Better != c.better {
			t.Errorf("%s: unit %q better %q, want %q %q", c.name, m.Unit, m.Better, c.unit, c.better)
		}
		for i := range c.reps {
			if !approx(m.Reps[i], c.reps[i]) {
				t.Errorf("%s reps %v, want %v (in repetition order)", c.name, m.Reps, c.reps)
				break
			}
		}
		if !approx(m.Min, c.min) || !approx(m.Median, c.med) || !approx(m.Max, c.maxV) {
			t.Errorf("%s min/median/max %v/%v/%v, want %v/%v/%v", c.name, m.Min, m.Median, m.Max, c.min, c.med, c.maxV)
		}
	}
}

func approx(a, b float64) bool {
	d := a - b
	return d < 1e-9*b+1e-12 && -d < 1e-9*b+1e-12
}

func TestEmptyRepetitionsGiveNoNaN(t *testing.T) {
	for _, m := range Metrics([]Rep{{}}) {
		if m.Reps[0] != 0 {
			t.Errorf("%s of an empty repetition = %v, want 0", m.Name, m.Reps[0])
		}
	}
}

func TestServerCPUPerOp(t *testing.T) {
	reps := []Rep{
		{Wall: time.Second, Ops: 2000, ClientCPU: CPUTimes{User: 100 * time.Millisecond}, HasServerCPU: true, ServerCPU: CPUTimes{User: 60 * time.Millisecond, System: 20 * time.Millisecond}},
		{Wall: time.Second, Ops: 1000, ClientCPU: CPUTimes{User: 100 * time.Millisecond}, HasServerCPU: true, ServerCPU: CPUTimes{User: 50 * time.Millisecond}},
	}
	got := map[string][]float64{}
	for _, m := range Metrics(reps) {
		got[m.Name] = m.Reps
	}
	// 80 ms over 2000 ops is 40 µs/op; 50 ms over 1000 is 50 µs/op.
	if s := got[schema.MetricServerCPUPerOp]; len(s) != 2 || !approx(s[0], 40e3) || !approx(s[1], 50e3) {
		t.Errorf("server_cpu_per_op %v, want [40000 50000] ns/op", s)
	}
	if c := got[schema.MetricClientCPUPerOp]; len(c) != 2 || !approx(c[0], 50e3) || !approx(c[1], 100e3) {
		t.Errorf("client_cpu_per_op %v, want [50000 100000] ns/op", c)
	}
}
