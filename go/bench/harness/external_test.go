package harness

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// fakeExternal reports the same readings for every repetition, and
// records the calls it gets.
type fakeExternal struct {
	rep       ExternalRep
	latencies LogBuckets
	warmups   []Warmup
	plans     []Plan
	calls     []string
}

func (f *fakeExternal) WarmUp(_ context.Context, w Warmup) error {
	f.warmups = append(f.warmups, w)
	f.calls = append(f.calls, "warm-up")
	return nil
}

func (f *fakeExternal) Prepare(_ context.Context, p Plan) error {
	f.plans = append(f.plans, p)
	f.calls = append(f.calls, "prepare")
	return nil
}

func (f *fakeExternal) Start(context.Context) (ExternalRep, error) {
	f.calls = append(f.calls, "start")
	return f.rep, nil
}

func (f *fakeExternal) Latencies(context.Context) (LogBuckets, error) {
	f.calls = append(f.calls, "latencies")
	return f.latencies, nil
}

// fixedCPU is a CPUSource that advances by step at each reading.
type fixedCPU struct{ now, step CPUTimes }

func (c *fixedCPU) CPU() (CPUTimes, error) {
	c.now.User += c.step.User
	c.now.System += c.step.System
	return c.now, nil
}

// bucketOf is the log bucket of a latency, as gRPC's histogram bins it.
func bucketOf(ns float64, resolution float64) int {
	return int(math.Floor(math.Log(ns) / math.Log(1+resolution)))
}

func TestRunExternalComputesWhatRunDoes(t *testing.T) {
	const res = 0.001
	counts := map[int]int64{bucketOf(100_000, res): 90, bucketOf(2_000_000, res): 10}
	f := &fakeExternal{
		rep: ExternalRep{
			Wall: 500 * time.Millisecond, CPU: CPUTimes{User: 200 * time.Millisecond, System: 50 * time.Millisecond},
			Ops: 100, Errors: 2, Msgs: 1000, FirstError: "boom", AllocBytes: 64_000,
		},
		latencies: LogBuckets{Resolution: res, Counts: counts},
	}
	r := &Runner{
		Scenario: "s", Server: &fixedCPU{step: CPUTimes{User: 100 * time.Millisecond}},
		Plan: Plan{Workers: 4, Duration: 500 * time.Millisecond, Rate: 300, Warmup: Warmup{Ops: 7}, Reps: 3},
	}
	reps, err := r.RunExternal(context.Background(), f)
	// Two failures in 102 calls is over an open loop's error budget: the
	// run fails, its repetitions kept.
	if err == nil || !strings.Contains(err.Error(), "2 of 102 operations failed") || len(reps) != 3 {
		t.Fatalf("err %v with %d repetitions, want the error share over budget and all 3", err, len(reps))
	}
	if len(f.warmups) != 1 || f.warmups[0].Ops != 7 || len(f.plans) != 3 || f.plans[0].Rate != 300 {
		t.Fatalf("warm-ups %v, plans %v", f.warmups, f.plans)
	}
	if got := strings.Join(f.calls[:4], ", "); got != "warm-up, prepare, start, latencies" {
		t.Errorf("calls %s", got)
	}
	rep := reps[0]
	if rep.OpsPerSec() != 200 || rep.ClientCPU.Total() != 250*time.Millisecond || rep.FirstError != "boom" {
		t.Errorf("rep %+v", rep)
	}
	if !rep.HasServerCPU || rep.ServerCPU.User != 100*time.Millisecond {
		t.Errorf("server CPU %+v (measured %v), want the 100ms read around the repetition", rep.ServerCPU, rep.HasServerCPU)
	}
	within := func(got time.Duration, want float64) bool { return math.Abs(float64(got)-want) <= want*0.002 }
	if rep.Latency.Count != 100 || !within(rep.Latency.P50, 100_000) || !within(rep.Latency.P99, 2_000_000) {
		t.Errorf("latencies %+v, want 100 with p50 100us and p99 2ms within 0.2%%", rep.Latency)
	}
	names := map[string]bool{}
	for _, m := range Metrics(reps) {
		names[m.Name] = true
	}
	if names[schema.MetricAllocsPerOp] || !names[schema.MetricBytesPerOp] || !names[schema.MetricServerCPUPerOp] {
		t.Errorf("metrics %v: want bytes_per_op and server_cpu_per_op, and no allocs_per_op", names)
	}
}

func TestRunExternalRefusesInconsistentReadings(t *testing.T) {
	plan := Plan{Workers: 1, Duration: time.Millisecond, Reps: 1}
	second := ExternalRep{Wall: time.Second, Ops: 1}
	for _, tc := range []struct {
		name      string
		rep       ExternalRep
		latencies LogBuckets
		want      string
	}{
		{"fewer latencies than calls", ExternalRep{Wall: time.Second, Ops: 5}, LogBuckets{Resolution: 0.001, Counts: map[int]int64{10: 4}},
			"reported 5 successful operations but 4 latencies"},
		{"no resolution", second, LogBuckets{Counts: map[int]int64{10: 1}}, "latency buckets of resolution 0"},
		{"a negative bucket", second, LogBuckets{Resolution: 0.01, Counts: map[int]int64{-1: 1}}, "latency bucket -1"},
		{"no wall time", ExternalRep{}, LogBuckets{}, "no wall time"},
		{"negative calls", ExternalRep{Wall: time.Second, Ops: -1}, LogBuckets{}, "negative readings"},
	} {
		r := &Runner{Scenario: "s", Plan: plan}
		if _, err := r.RunExternal(context.Background(), &fakeExternal{rep: tc.rep, latencies: tc.latencies}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	r := &Runner{Scenario: "s", Plan: Plan{Workers: 1, Ops: 10, Reps: 1}}
	if _, err := r.RunExternal(context.Background(), &fakeExternal{}); err == nil {
		t.Error("a fixed-iteration plan was accepted")
	}
}

// failingExternal fails its warm-up.
type failingExternal struct{ fakeExternal }

func (failingExternal) WarmUp(context.Context, Warmup) error { return errors.New("refused") }

func TestRunExternalReportsAFailedWarmUp(t *testing.T) {
	r := &Runner{Scenario: "s", Plan: Plan{Workers: 1, Duration: time.Millisecond, Warmup: Warmup{Ops: 1}, Reps: 1}}
	if _, err := r.RunExternal(context.Background(), &failingExternal{}); err == nil || err.Error() != "s warm-up: refused" {
		t.Errorf("got %v", err)
	}
}

func TestLogBucketsBeyondTheRangeCountAtItsEnd(t *testing.T) {
	// Bucket 50,000 at 0.1% is 5e21 ns, past int64: it must count as the
	// longest latency tracked, not wrap to a negative one.
	h := newLatencyHistogram()
	b := LogBuckets{Resolution: 0.001, Counts: map[int]int64{50_000: 1, 0: 1}}
	if err := b.record(h); err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 2 || h.Max() < maxTrackedLatency*999/1000 || h.Min() != minTrackedLatency {
		t.Errorf("count %d, min %d, max %d: want one at each end of the range", h.TotalCount(), h.Min(), h.Max())
	}
}
