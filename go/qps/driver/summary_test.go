package driver

import (
	"math"
	"testing"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Two clients and one two-core server, figures chosen by hand.
func TestSummaryIsGrpcDriversArithmetic(t *testing.T) {
	lat := newStandard(t)
	clientA, clientB := newStandard(t), newStandard(t)
	for i := 0; i < 3000; i++ {
		clientA.Add(100_000)
	}
	for i := 0; i < 1000; i++ {
		clientB.Add(300_000)
	}
	for _, c := range []*Histogram{clientA, clientB} {
		if err := lat.Merge(c.Data()); err != nil {
			t.Fatal(err)
		}
	}
	r := &testpb.ScenarioResult{
		ClientStats: []*testpb.ClientStats{
			{Latencies: clientA.Data(), TimeElapsed: 2, TimeUser: 1, TimeSystem: 0.5,
				RequestResults: []*testpb.RequestResultCount{{StatusCode: 0, Count: 3000}}},
			{Latencies: clientB.Data(), TimeElapsed: 2, TimeUser: 0.5, TimeSystem: 0,
				RequestResults: []*testpb.RequestResultCount{{StatusCode: 0, Count: 990}, {StatusCode: 14, Count: 10}}},
		},
		ServerStats: []*testpb.ServerStats{{TimeElapsed: 2, TimeUser: 1.5, TimeSystem: 0.5, TotalCpuTime: 400, IdleCpuTime: 100}},
		ServerCores: []int32{2},
	}
	r.RequestResults = []*testpb.RequestResultCount{{StatusCode: 0, Count: 3990}, {StatusCode: 14, Count: 10}}
	Summarize(r, lat)
	s := r.Summary
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"qps", s.Qps, 1500 + 500},
		{"qps per server core", s.QpsPerServerCore, 2000.0 / 2},
		{"client user time %", s.ClientUserTime, 100 * (0.5 + 0.25)},
		{"client system time %", s.ClientSystemTime, 100 * 0.25},
		{"server user time %", s.ServerUserTime, 100 * 0.75},
		{"server system time %", s.ServerSystemTime, 100 * 0.25},
		{"server CPU usage %", s.ServerCpuUsage, 75},
		{"server queries per CPU second", s.ServerQueriesPerCpuSec, 4000 / 2.0},
		{"client queries per CPU second", s.ClientQueriesPerCpuSec, 4000 / 2.0},
		{"successful requests/s", s.SuccessfulRequestsPerSecond, 3990 / 2.0},
		{"failed requests/s", s.FailedRequestsPerSecond, 10 / 2.0},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Three quarters of the calls took 100 µs, a quarter 300 µs.
	if s.Latency_50 < 99_000 || s.Latency_50 > 101_000 {
		t.Errorf("p50 = %v, want about 100 µs", s.Latency_50)
	}
	if s.Latency_90 < 297_000 || s.Latency_90 > 303_000 {
		t.Errorf("p90 = %v, want about 300 µs", s.Latency_90)
	}
}

func TestSummaryOfNothingIsZeroNotInfinite(t *testing.T) {
	r := &testpb.ScenarioResult{ClientStats: []*testpb.ClientStats{{}}, ServerStats: []*testpb.ServerStats{{}}}
	Summarize(r, newStandard(t))
	for name, v := range map[string]float64{
		"qps": r.Summary.Qps, "qps per core": r.Summary.QpsPerServerCore,
		"server queries per CPU second": r.Summary.ServerQueriesPerCpuSec,
		"client polls per request":      r.Summary.ClientPollsPerRequest,
	} {
		if v != 0 {
			t.Errorf("%s = %v, want 0", name, v)
		}
	}
}
