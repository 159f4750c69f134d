package main

import (
	"io"
	"strings"
	"testing"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

func result(clientCPU, serverCPU float64, serverCores int32) *testpb.ScenarioResult {
	return &testpb.ScenarioResult{
		ClientStats: []*testpb.ClientStats{{TimeElapsed: 2, TimeUser: clientCPU * 0.75, TimeSystem: clientCPU * 0.25,
			Latencies: &testpb.HistogramData{Count: 10_000, MaxSeen: 5e6}}},
		ServerStats: []*testpb.ServerStats{{TimeElapsed: 2, TimeUser: serverCPU / 2, TimeSystem: serverCPU / 2}},
		ServerCores: []int32{serverCores},
		Latencies:   &testpb.HistogramData{Count: 10_000, MaxSeen: 5e6},
		RequestResults: []*testpb.RequestResultCount{
			{StatusCode: 0, Count: 10_000}, {StatusCode: 14, Count: 7},
		},
		Summary: &testpb.ScenarioResultSummary{QpsPerServerCore: 5000, Latency_50: 100e3, Latency_99: 900e3},
	}
}

func TestMeasureIsTheScenarioResult(t *testing.T) {
	m := measure(result(1.8, 1.0, 1), 1)
	if m.rep.Wall != 2*time.Second || m.rep.Ops != 10_000 || m.rep.Errors != 7 || !m.rep.HasServerCPU {
		t.Errorf("rep %+v", m.rep)
	}
	if m.rep.ClientCPU.Total() != 1800*time.Millisecond || m.rep.ServerCPU.Total() != time.Second {
		t.Errorf("CPU: client %v server %v", m.rep.ClientCPU.Total(), m.rep.ServerCPU.Total())
	}
	if m.rep.Latency.P50 != 100*time.Microsecond || m.rep.Latency.Max != 5*time.Millisecond {
		t.Errorf("latency %+v", m.rep.Latency)
	}
	if u, v := m.rep.ClientUtilisation(), m.rep.ServerUtilisation(); u != 0.9 || v != 0.5 || m.qpsPerServerCore != 5000 {
		t.Errorf("utilisation client %v server %v, qps per core %v", u, v, m.qpsPerServerCore)
	}
	// Two server cores half as busy each.
	if m := measure(result(1, 2, 2), 1); m.rep.ServerUtilisation() != 0.5 {
		t.Errorf("server utilisation on 2 cores = %v, want 0.5", m.rep.ServerUtilisation())
	}
}

func TestBadFlagsAreRefused(t *testing.T) {
	ok := []string{"-go_worker=/w/go", "-lisp_worker=/w/lisp"}
	if _, err := parseFlags(ok, io.Discard); err != nil {
		t.Fatalf("good flags: %v", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-lisp_worker=/w/lisp"}, "needs -go_worker"},
		{append(ok, "-servers=java"), "not go or lisp"},
		{append(ok, "-scenarios=ping"), "no scenario \"ping\""},
		{append(ok, "-payloads=-1"), "-payloads"},
		{append(ok, "-duration=1500ms"), "whole seconds"},
		{append(ok, "-warmup=100"), "whole seconds"},
		{append(ok, "-cpus=0/0"), "overlap"},
	} {
		var out strings.Builder
		if _, err := parseFlags(c.args, &out); err == nil || !strings.Contains(out.String(), c.want) || !strings.Contains(out.String(), "Usage") {
			t.Errorf("%q: %v; output %q, want %q and the usage", c.args, err, out.String(), c.want)
		}
	}
}
