package harness

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// utilisedRep is a repetition of wall 2 s on one client core and one server core.
func utilisedRep(client, server time.Duration) Rep {
	return Rep{
		Wall: 2 * time.Second, Ops: 100,
		ClientCPU: CPUTimes{User: client}, ServerCPU: CPUTimes{User: server}, HasServerCPU: true,
		ClientCores: 1, ServerCores: 1,
	}
}

// A cell is server-bound only when its server was saturated and its client
// was not: a saturated client set the figure whatever the server did.
func TestBottleneck(t *testing.T) {
	for _, c := range []struct {
		client, server float64
		want           string
	}{
		{0.5, 0.97, BottleneckServer},
		{0.5, 0.85, BottleneckServer},
		{0.95, 0.97, BottleneckBoth},
		{0.85, 0.5, BottleneckClient},
		{0.5, 0.84, BottleneckNeither},
	} {
		if got := Bottleneck(c.client, c.server); got != c.want {
			t.Errorf("client %v, server %v: %s, want %s", c.client, c.server, got, c.want)
		}
	}
}

// Result names the bottleneck from the medians of the repetitions' utilisations, and reports both.
func TestResultNamesTheBottleneck(t *testing.T) {
	reps := []Rep{
		utilisedRep(1900*time.Millisecond, 1000*time.Millisecond), // client 95%
		utilisedRep(1000*time.Millisecond, 1900*time.Millisecond), // server 95%
		utilisedRep(1000*time.Millisecond, 1800*time.Millisecond), // server 90%
	}
	params := map[string]any{"impl": "go"}
	res := Result("unary/clients=10", params, reps, nil)
	if got := res.Parameters["bottleneck"]; got != BottleneckServer {
		t.Errorf("bottleneck %q, want %q (medians: client 50%%, server 90%%)", got, BottleneckServer)
	}
	if _, ok := params["bottleneck"]; ok {
		t.Error("Result changed its caller's parameters")
	}
	for name, want := range map[string]float64{schema.MetricClientUtilisation: 0.5, schema.MetricServerUtilisation: 0.9} {
		m, ok := res.Metric(name)
		if !ok || m.Median != want || m.Unit != schema.UnitRatio {
			t.Errorf("%s: %+v, %v; want median %v", name, m, ok, want)
		}
	}
	// Two server cores, each half busy: 50%.
	r := utilisedRep(time.Second, 2*time.Second)
	r.ServerCores = 2
	if u := r.ServerUtilisation(); u != 0.5 {
		t.Errorf("server on 2 cores: %v, want 0.5", u)
	}
	// The server's own elapsed time, where it reports one.
	r.ServerWall = 4 * time.Second
	if u := r.ServerUtilisation(); u != 0.25 {
		t.Errorf("server over its own 4 s: %v, want 0.25", u)
	}
}

// Sides that shared CPUs name no bottleneck of their own.
func TestSharedCPUsNameNoSide(t *testing.T) {
	r := utilisedRep(1900*time.Millisecond, 1900*time.Millisecond)
	r.SharedCPUs = true
	if got := Result("x", nil, []Rep{r}, nil).Parameters["bottleneck"]; got != BottleneckShared {
		t.Errorf("bottleneck %v, want %q", got, BottleneckShared)
	}
}

// Without both sides' cores (in-process, or a server whose CPU was not read)
// nothing is said of utilisation or bottleneck.
func TestNoBottleneckWithoutBothSides(t *testing.T) {
	inProcess := utilisedRep(time.Second, 0)
	inProcess.HasServerCPU, inProcess.ClientCores, inProcess.ServerCores = false, 0, 0
	res := Result("x", nil, []Rep{inProcess}, nil)
	if _, ok := res.Parameters["bottleneck"]; ok {
		t.Errorf("in-process: bottleneck %v", res.Parameters["bottleneck"])
	}
	for _, name := range []string{schema.MetricClientUtilisation, schema.MetricServerUtilisation} {
		if _, ok := res.Metric(name); ok {
			t.Errorf("in-process: %s reported", name)
		}
	}
	noServerCores := utilisedRep(time.Second, time.Second)
	noServerCores.ServerCores = 0
	res = Result("x", nil, []Rep{utilisedRep(time.Second, time.Second), noServerCores}, nil)
	if _, ok := res.Parameters["bottleneck"]; ok {
		t.Error("a repetition without the server's cores, yet a bottleneck")
	}
	if _, ok := res.Metric(schema.MetricClientUtilisation); !ok {
		t.Error("the client's utilisation, known in every repetition, is missing")
	}
}

// A Runner with a server process reads both sides' CPU sets.
func TestRunnerReadsBothSidesCores(t *testing.T) {
	r := &Runner{Server: NewProcessCPU(os.Getpid())}
	client, server, shared := r.sideCores()
	if client < 1 || server != client || !shared {
		t.Errorf("cores: client %v, server (this process) %v, shared %v", client, server, shared)
	}
	if c, s, shared := (&Runner{}).sideCores(); c != 0 || s != 0 || shared {
		t.Errorf("in-process: cores %v, %v, shared %v; want none", c, s, shared)
	}
}

// A server held to a CPU quota below its CPU set is saturated at the quota:
// its cores are the quota.
func TestServerCoresAreItsQuota(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "cpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "cpu", "cpu.cfs_quota_us"), []byte("-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := cgroup.New(cgroup.Detect(root), "server", cgroup.Quota{Cores: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	server := NewServerCPU(os.Getpid(), g)
	if _, cores, _ := (&Runner{Server: server}).sideCores(); cores != 0.5 {
		t.Errorf("server cores %v with a quota of 0.5; want 0.5", cores)
	}
	rep := Rep{Wall: time.Second, ServerCPU: CPUTimes{User: 450 * time.Millisecond}, HasServerCPU: true, ServerCores: 0.5}
	if u := rep.ServerUtilisation(); u < 0.899 || u > 0.901 {
		t.Errorf("utilisation %v of 450 ms in 1 s on half a core; want 0.9", u)
	}
}
