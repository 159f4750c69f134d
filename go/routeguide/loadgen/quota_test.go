package main

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
)

// A sweep is every capped quota at every period, and one uncapped point,
// in the order given; its cells run a cap at a time, each named for it.
func TestQuotaSweepPointsAndTheirCells(t *testing.T) {
	cfg, err := parseFlags([]string{"loadgen", "-server", "/bin/true", "-rpcs", "unary", "-clients", "10",
		"-server_cpu_quota", "0.25,1,0", "-server_cpu_period", "10ms,100ms"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []cgroup.Quota{{Cores: 0.25, Period: 10 * time.Millisecond}, {Cores: 0.25, Period: 100 * time.Millisecond},
		{Cores: 1, Period: 10 * time.Millisecond}, {Cores: 1, Period: 100 * time.Millisecond}, {}}
	if !slices.Equal(cfg.quotas, want) || !cfg.sweep() || !cfg.capped() {
		t.Fatalf("points %v (sweep %v, capped %v), want %v", cfg.quotas, cfg.sweep(), cfg.capped(), want)
	}
	ss := &session{cfg: cfg, impl: "lisp", work: &workload{}}
	var names, periods []string
	for _, s := range cfg.scenarios() {
		names = append(names, ss.scenarioName(s))
		periods = append(periods, ss.params(s)["server_cpu_period"].(string))
	}
	wantNames := []string{
		"lisp/unary/clients=10/cpu_quota=0.25/cpu_period=10ms",
		"lisp/unary/clients=10/cpu_quota=0.25/cpu_period=100ms",
		"lisp/unary/clients=10/cpu_quota=1/cpu_period=10ms",
		"lisp/unary/clients=10/cpu_quota=1/cpu_period=100ms",
		"lisp/unary/clients=10/cpu_quota=none",
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("cells %q, want %q", names, wantNames)
	}
	if want := []string{"10ms", "100ms", "10ms", "100ms", "none"}; !slices.Equal(periods, want) {
		t.Errorf("server_cpu_period %q, want %q", periods, want)
	}
}

// One cap keeps the capped grid's names; a period other than the default
// is named too.
func TestOneCapKeepsTheCappedGridsNames(t *testing.T) {
	for _, tc := range []struct {
		period, want string
	}{
		{"10ms", "go/unary/clients=1/cpu_quota=0.25"},
		{"100ms", "go/unary/clients=1/cpu_quota=0.25/cpu_period=100ms"},
	} {
		cfg, err := parseFlags([]string{"loadgen", "-server", "/bin/true", "-rpcs", "unary", "-clients", "1",
			"-server_cpu_quota", "0.25", "-server_cpu_period", tc.period}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		ss := &session{cfg: cfg, impl: "go", work: &workload{}}
		if cfg.sweep() {
			t.Errorf("one cap taken for a sweep")
		}
		if got := ss.scenarioName(cfg.scenarios()[0]); got != tc.want {
			t.Errorf("period %s: %q, want %q", tc.period, got, tc.want)
		}
	}
}
