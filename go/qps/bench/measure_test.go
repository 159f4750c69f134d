package main

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/qps/scenarios"
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
	m := measure(result(1.8, 1.0, 1), 1, cgroup.Quota{})
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
	// Under a quota, of the CPU time it may use: a quarter of a core.
	if m := measure(result(1, 0.5, 1), 1, cgroup.Quota{Cores: 0.25, Period: 100 * time.Millisecond}); m.rep.ServerUtilisation() != 1 {
		t.Errorf("server utilisation at a quarter of a core = %v, want 1", m.rep.ServerUtilisation())
	}
	// Two server cores half as busy each.
	if m := measure(result(1, 2, 2), 1, cgroup.Quota{}); m.rep.ServerUtilisation() != 0.5 {
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
		{append(ok, "-server_cpu_quota="), "-server_cpu_quota: empty list"},
		{append(ok, "-server_cpu_quota=half"), "not a number of cores"},
		{append(ok, "-server_cpu_quota=0.5", "-server_cpu_period=2s"), "the kernel accepts"},
	} {
		var out strings.Builder
		if _, err := parseFlags(c.args, &out); err == nil || !strings.Contains(out.String(), c.want) || !strings.Contains(out.String(), "Usage") {
			t.Errorf("%q: %v; output %q, want %q and the usage", c.args, err, out.String(), c.want)
		}
	}
}

// With caps, the suite is qps_quota: every cap at every period and the
// uncapped point, each cell named for its cap and carrying it as
// parameters; without, the qps suite's names and parameters are unchanged.
func TestQuotaSweepCells(t *testing.T) {
	cfg, err := parseFlags([]string{"-go_worker=/w/go", "-lisp_worker=/w/lisp",
		"-server_cpu_quota=0.25,0", "-server_cpu_period=10ms,100ms"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.quotas) != 3 || !cfg.capped() {
		t.Fatalf("points %v (capped %v), want 0.25 at two periods and none", cfg.quotas, cfg.capped())
	}
	shape, _ := scenarios.Named("unary_qps_unconstrained")
	var names, periods []string
	for _, q := range cfg.quotas {
		res := cell{shape: shape, client: "go", quota: q, sweep: true}.result("lisp", nil, nil, nil)
		names = append(names, res.Scenario)
		periods = append(periods, res.Parameters["server_cpu_period"].(string))
		if res.Parameters["server_cpu_quota"] != q.Cores {
			t.Errorf("%s: server_cpu_quota %v, want %v", res.Scenario, res.Parameters["server_cpu_quota"], q.Cores)
		}
	}
	want := []string{
		"unary_qps_unconstrained/payload=0/server=lisp/client=go/cpu_quota=0.25/cpu_period=10ms",
		"unary_qps_unconstrained/payload=0/server=lisp/client=go/cpu_quota=0.25/cpu_period=100ms",
		"unary_qps_unconstrained/payload=0/server=lisp/client=go/cpu_quota=none",
	}
	if !slices.Equal(names, want) || !slices.Equal(periods, []string{"10ms", "100ms", "none"}) {
		t.Errorf("cells %q periods %q, want %q", names, periods, want)
	}

	plain, err := parseFlags([]string{"-go_worker=/w/go", "-lisp_worker=/w/lisp"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if plain.capped() || len(plain.quotas) != 1 {
		t.Fatalf("default points %v, want one uncapped", plain.quotas)
	}
	res := cell{shape: shape, client: "go", quota: plain.quotas[0], sweep: plain.capped()}.result("go", nil, nil, nil)
	if _, named := res.Parameters["server_cpu_quota"]; named || res.Scenario != "unary_qps_unconstrained/payload=0/server=go/client=go" {
		t.Errorf("uncapped cell %q with parameters %v", res.Scenario, res.Parameters)
	}
}

// Under a quota, qps per server core is the QPS over the quota, not over
// the CPUs the worker reports.
func TestQPSPerCoreUnderAQuota(t *testing.T) {
	r := result(1, 0.5, 1)
	r.Summary.Qps = 5000
	m := measure(r, 1, cgroup.Quota{Cores: 0.25, Period: 10 * time.Millisecond})
	if m.qpsPerServerCore != 20000 {
		t.Errorf("qps per server core at a quarter of a core = %v, want 20000", m.qpsPerServerCore)
	}
}

// A point that could not be measured fails each of its cells on each
// server, under the names measured cells have, with the reason; and the
// points start the servers in turn.
func TestAPointThatFailsKeepsItsCells(t *testing.T) {
	cfg, err := parseFlags([]string{"-go_worker=/w/go", "-lisp_worker=/w/lisp", "-scenarios=unary_qps_unconstrained",
		"-payloads=0", "-clients=go", "-server_cpu_quota=0.5", "-server_cpu_period=10ms"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	results := cfg.failedAt(cfg.quotas[0], errors.New("not run: no cgroup"))
	var names []string
	for _, r := range results {
		names = append(names, r.Scenario)
		if r.Status == schema.StatusOK || !strings.Contains(r.Error, "no cgroup") {
			t.Errorf("%s: status %v error %q, want a failure naming its reason", r.Scenario, r.Status, r.Error)
		}
	}
	want := []string{
		"unary_qps_unconstrained/payload=0/server=go/client=go/cpu_quota=0.5/cpu_period=10ms",
		"unary_qps_unconstrained/payload=0/server=lisp/client=go/cpu_quota=0.5/cpu_period=10ms",
	}
	if !slices.Equal(names, want) {
		t.Errorf("cells %q, want %q", names, want)
	}
	if a, b := cfg.startOrder(0), cfg.startOrder(1); !slices.Equal(a, []string{"go", "lisp"}) || !slices.Equal(b, []string{"lisp", "go"}) {
		t.Errorf("start orders %v then %v, want each server first in turn", a, b)
	}
}
