// Package cappedtest checks the results of a benchmark whose servers were
// held to a CPU quota (//bench/routeguide:smoke_capped), as measured by a
// real build of the benchmark action: on a host where the quota can be set
// (root, a cgroup cpu controller), each server was throttled, and its
// utilisation counts against the quota, not its core.
package cappedtest

import (
	"flag"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var results = flag.String("results", "", "space-separated runfile paths of the capped benchmark's outputs (its .json is read)")

func TestServersWereCapped(t *testing.T) {
	var path string
	for _, p := range strings.Fields(*results) {
		if strings.HasSuffix(p, ".json") {
			path = runfile.Path(p)
		}
	}
	if path == "" {
		t.Skipf("no results JSON among -results %q: run it under Bazel, which measures them", *results)
	}
	file, err := schema.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if file.Suite != "routeguide_capped" {
		t.Errorf("suite %q, want routeguide_capped", file.Suite)
	}
	if q := file.Environment.Extra[schema.ExtraServerCPUQuota]; !strings.HasPrefix(q, "0.25 cores") {
		t.Errorf("environment records quota %q", q)
	}
	impls := map[string]int{}
	for _, r := range file.Results {
		if r.Status != schema.StatusOK && strings.Contains(r.Error, "needs root and a cgroup cpu controller") {
			t.Skipf("this host cannot cap a server's CPU: %s", r.Error)
		}
		if r.Status != schema.StatusOK {
			// A host that cannot set the quota fails every cell, saying why.
			t.Fatalf("%s: %s: %s", r.Scenario, r.Status, r.Error)
		}
		impls[r.Parameters["impl"].(string)]++
		if !strings.HasSuffix(r.Scenario, "/cpu_quota=0.25") || r.Parameters["server_cpu_quota"] != 0.25 {
			t.Errorf("%s: params %v", r.Scenario, r.Parameters)
		}
		throttled, ok := r.Metric(schema.MetricServerThrottled)
		if !ok {
			t.Errorf("%s: no throttling recorded", r.Scenario)
			continue
		}
		util, _ := r.Metric(schema.MetricServerUtilisation)
		// A server that wants more than a quarter of a core is held back in
		// some periods, and its CPU time over the quota, never much above 1,
		// is its utilisation.
		if util.Median > 1.1 {
			t.Errorf("%s: server utilisation %.2f of its quota; the quota did not hold", r.Scenario, util.Median)
		}
		if r.Parameters["clients"] == 4.0 && (throttled.Median <= 0 || util.Median < 0.5) {
			t.Errorf("%s: four clients' calls left the server throttled in %.0f%% of periods, %.0f%% busy; want a server at its quota",
				r.Scenario, 100*throttled.Median, 100*util.Median)
		}
	}
	if impls["go"] == 0 || impls["lisp"] == 0 {
		t.Errorf("results by server %v, want both", impls)
	}
}
