// Package cappedtest runs the load generator with both RouteGuide servers
// held to a CPU quota (-server_cpu_quota), as the capped grid does, and
// checks what the results say: each server was throttled, its
// utilisation counts against the quota, not its core, and each said what
// heap it held. It needs root and a
// cgroup cpu controller, so it runs unsandboxed (see BUILD.bazel), and
// skips, saying why, where the host cannot cap a process.
package cappedtest

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var (
	loadgen    = flag.String("loadgen", "", "rlocation of the RouteGuide load generator")
	goServer   = flag.String("go_server", "", "rlocation of the Go RouteGuide server")
	lispServer = flag.String("lisp_server", "", "rlocation of the Lisp RouteGuide server")
)

func TestServersAreCapped(t *testing.T) {
	if *loadgen == "" || *goServer == "" || *lispServer == "" {
		t.Skip("needs -loadgen, -go_server and -lisp_server (tools/bazel test passes them)")
	}
	if h := cgroup.Detect(cgroup.Root); os.Geteuid() != 0 || (h.CPU == "" && !h.UnifiedHasCPU) {
		t.Skipf("this host cannot cap a server's CPU: needs root and a cgroup cpu controller (euid %d, %+v)", os.Geteuid(), h)
	}
	out := filepath.Join(t.TempDir(), "results.json")
	cmd := exec.Command(runfile.Path(*loadgen),
		"-server", runfile.Path(*goServer), "-impl", "go",
		"-rival", runfile.Path(*lispServer), "-rival_impl", "lisp",
		"-server_cpu_quota", "0.25", "-clients", "1,4", "-duration", "300ms", "-reps", "1", "-warmup", "0",
		"-out", out, "-benchfmt", filepath.Join(t.TempDir(), "results.txt"))
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, output)
	}
	file, err := schema.ReadFile(out)
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
	maxThrottled := map[string]float64{}
	for _, r := range file.Results {
		if r.Status != schema.StatusOK {
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
		// Its CPU time over the quota, never much above 1, is its
		// utilisation.
		if util.Median > 1.1 {
			t.Errorf("%s: server utilisation %.2f of its quota; the quota did not hold", r.Scenario, util.Median)
		}
		// Both servers answer the load generator's SIGWINCH with their heap.
		if heap, ok := r.Metric(schema.MetricServerLiveHeap); !ok || heap.Median <= 0 {
			t.Errorf("%s: no live heap recorded (%v)", r.Scenario, heap)
		}
		maxThrottled[r.Parameters["impl"].(string)] = max(maxThrottled[r.Parameters["impl"].(string)], throttled.Median)
	}
	// Only a quota throttles: a server that was never held back in any cell
	// ran without one. (How often it was depends on how hard the load
	// generator could push, which a busy machine limits.)
	for _, impl := range []string{"go", "lisp"} {
		if maxThrottled[impl] <= 0 {
			t.Errorf("the %s server was never throttled: its quota did not apply", impl)
		}
	}
	if impls["go"] == 0 || impls["lisp"] == 0 {
		t.Errorf("results by server %v, want both", impls)
	}
	if got := file.Environment.Extra[schema.ExtraServerCPUClock]; got != "cgroup cpu.stat (µs)" {
		t.Errorf("server CPU read from %q, want the cgroup's", got)
	}
}
