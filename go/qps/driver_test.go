package qps_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var (
	goWorker   = flag.String("go_worker", "", "rlocation of grpc-go's qps worker")
	lispWorker = flag.String("lisp_worker", "", "rlocation of //lisp/qps:worker")
	driver     = flag.String("driver", "", "rlocation of //go/qps/cmd/driver")
)

// A worker implementation: how to start it on a given driver port.
type workerKind struct {
	name      string
	rlocation *string
	argv      func(path, port string) []string
}

var (
	goKind = workerKind{"go", goWorker, func(path, port string) []string {
		return []string{path, "--driver_port=" + port}
	}}
	// The Lisp worker listens on all interfaces unless told otherwise, as
	// gRPC's workers do; tests keep it on loopback.
	lispKind = workerKind{"lisp", lispWorker, func(path, port string) []string {
		return []string{path, "-driver_port", port, "-host", "127.0.0.1"}
	}}
)

// startKind starts a worker of kind k on a free loopback port and returns
// it with its driver address.
func startKind(t *testing.T, name string, k workerKind) (*serverproc.Process, string) {
	t.Helper()
	if *k.rlocation == "" {
		t.Skipf("the %s worker's rlocation is not set; run under `tools/bazel test //go/qps:qps_test`", k.name)
	}
	p := serverproc.StartListeningForTest(t, name, func(port string) []string {
		return k.argv(runfile.Path(*k.rlocation), port)
	}, 60*time.Second, 5*time.Second)
	return p, p.Addr()
}

// scenario is a short standard scenario: one server, one client, closed
// loop, 1 s of warm-up and benchmarkSeconds of measurement, with the
// channel argument every one of gRPC's standard scenarios carries.
func scenario(name, rpcType string, channels, outstanding, payload, benchmarkSeconds int) string {
	return fmt.Sprintf(`{"scenarios": [{"name": %q, "warmup_seconds": 1, "benchmark_seconds": %d,
  "num_servers": 1, "num_clients": 1,
  "server_config": {"server_type": "ASYNC_SERVER", "async_server_threads": 1,
    "channel_args": [{"name": "grpc.optimization_target", "str_value": "throughput"}]},
  "client_config": {"client_type": "ASYNC_CLIENT", "outstanding_rpcs_per_channel": %d, "client_channels": %d,
    "channel_args": [{"name": "grpc.optimization_target", "str_value": "throughput"}],
    "async_client_threads": 1, "rpc_type": %q, "load_params": {"closed_loop": {}},
    "payload_config": {"simple_params": {"req_size": %d, "resp_size": %d}},
    "histogram_params": {"resolution": 0.01, "max_possible": 60000000000}}}]}`,
		name, benchmarkSeconds, outstanding, channels, rpcType, payload, payload)
}

type driverRun struct {
	stdout, stderr string
	err            error
	result         *testpb.ScenarioResult
}

func runDriver(t *testing.T, timeout time.Duration, workers []string, args ...string) driverRun {
	t.Helper()
	if *driver == "" {
		t.Skip("-driver is not set; run under `tools/bazel test //go/qps:qps_test`")
	}
	resultFile := filepath.Join(t.TempDir(), "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, runfile.Path(*driver), append([]string{"--scenario_result_file=" + resultFile}, args...)...)
	cmd.Env = append(os.Environ(), "QPS_WORKERS="+strings.Join(workers, ","))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r := driverRun{err: cmd.Run()}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	t.Logf("driver %v: %v\nstdout:\n%s\nstderr:\n%s", args, r.err, r.stdout, r.stderr)
	if ctx.Err() != nil {
		t.Fatalf("the driver did not finish within %v", timeout)
	}
	if data, err := os.ReadFile(resultFile); err == nil {
		r.result = &testpb.ScenarioResult{}
		if err := protojson.Unmarshal(data, r.result); err != nil {
			t.Fatalf("the result file is not a ScenarioResult: %v\n%s", err, data)
		}
	}
	return r
}

// The driver runs gRPC's standard scenarios against grpc-go's own qps
// workers, each in its own process, and computes a coherent result.
func TestDriverRunsGrpcGoWorkers(t *testing.T) {
	server, serverAddr := startKind(t, "server worker", goKind)
	_, clientAddr := startKind(t, "client worker", goKind)
	for _, c := range []struct {
		name, rpcType                  string
		channels, outstanding, payload int
	}{
		{"unary_ping_pong", "UNARY", 1, 1, 0},
		{"streaming_qps_1KiB", "STREAMING", 2, 4, 1024},
	} {
		t.Run(c.name, func(t *testing.T) {
			const seconds = 2
			run := runDriver(t, time.Minute, []string{serverAddr, clientAddr},
				"--scenarios_json="+scenario(c.name, c.rpcType, c.channels, c.outstanding, c.payload, seconds))
			checkResult(t, run, serverAddr, seconds)
		})
	}
	if err := server.ExitedEarly(); err != nil {
		t.Errorf("server worker: %v", err)
	}
}

// A client worker that dies in the middle of the measurement fails the run
// plainly and promptly, and leaves the server worker able to serve the next.
func TestDriverReportsAWorkerThatDies(t *testing.T) {
	_, serverAddr := startKind(t, "server worker", goKind)
	client, clientAddr := startKind(t, "client worker", goKind)
	go func() {
		time.Sleep(2 * time.Second) // inside the 6 s measurement
		client.Stop()
	}()
	started := time.Now()
	run := runDriver(t, time.Minute, []string{serverAddr, clientAddr},
		"--setup_timeout=10s", "--scenarios_json="+scenario("dies", "UNARY", 1, 1, 0, 6))
	if run.err == nil {
		t.Fatal("the driver succeeded although its client worker died")
	}
	if !strings.Contains(run.stderr, "client worker "+clientAddr) {
		t.Errorf("the error does not name the dead worker %s:\n%s", clientAddr, run.stderr)
	}
	if elapsed := time.Since(started); elapsed > 25*time.Second {
		t.Errorf("the driver took %v to notice", elapsed)
	}
	_, otherClient := startKind(t, "second client worker", goKind)
	if again := runDriver(t, time.Minute, []string{serverAddr, otherClient}, "--scenarios_json="+scenario("again", "UNARY", 1, 1, 0, 1)); again.err != nil {
		t.Errorf("the server worker could not run a second scenario: %v", again.err)
	}
}

// A worker that cannot be reached fails the run within the setup timeout,
// naming it, instead of hanging the driver.
func TestDriverGivesUpOnAnUnreachableWorker(t *testing.T) {
	_, serverAddr := startKind(t, "server worker", goKind)
	port, err := serverproc.FreeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	nobody := fmt.Sprintf("127.0.0.1:%d", port)
	started := time.Now()
	run := runDriver(t, time.Minute, []string{serverAddr, nobody}, "--setup_timeout=3s",
		"--scenarios_json="+scenario("nobody", "UNARY", 1, 1, 0, 1))
	if exitCode(run.err) != 1 || !strings.Contains(run.stderr, "worker "+nobody+": not reachable") {
		t.Errorf("exit %d, stderr %q; want 1 and the unreachable worker named", exitCode(run.err), run.stderr)
	}
	if elapsed := time.Since(started); elapsed > 20*time.Second {
		t.Errorf("the driver took %v to give up, with a 3 s setup timeout", elapsed)
	}
}

func TestQuitStopsTheWorkers(t *testing.T) {
	a, addrA := startKind(t, "worker a", goKind)
	b, addrB := startKind(t, "worker b", goKind)
	if run := runDriver(t, 30*time.Second, []string{addrA, addrB}, "--quit"); run.err != nil {
		t.Fatalf("--quit: %v", run.err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range []*serverproc.Process{a, b} {
		for p.ExitedEarly() == nil {
			if time.Now().After(deadline) {
				t.Fatalf("worker %s still runs 10 s after --quit", p.Addr())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func TestBadUsageExitsTwo(t *testing.T) {
	for _, args := range [][]string{{}, {"--quit", "--scenarios_json={}"}, {"--no_such_flag"}, {"--quit", "extra"}} {
		run := runDriver(t, 10*time.Second, nil, args...)
		if code := exitCode(run.err); code != 2 || !strings.Contains(run.stderr, "usage: driver") {
			t.Errorf("driver %q: exit %d, stderr %q; want 2 and the usage", args, code, run.stderr)
		}
	}
	run := runDriver(t, 10*time.Second, nil, "--quit")
	if code := exitCode(run.err); code != 1 || !strings.Contains(run.stderr, "QPS_WORKERS") {
		t.Errorf("no workers: exit %d, stderr %q; want 1 and a word on QPS_WORKERS", code, run.stderr)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// checkResult checks that a run succeeded and that its result hangs
// together: one client and one server reported, both ended cleanly, the
// client went to the server worker's benchmark port, measured about the
// scenario's seconds, and the summary is the arithmetic of the statistics.
func checkResult(t *testing.T, run driverRun, serverAddr string, seconds float64) {
	t.Helper()
	if run.err != nil || run.result == nil {
		t.Fatalf("driver failed: %v", run.err)
	}
	r, s := run.result, run.result.Summary
	if len(r.ClientStats) != 1 || len(r.ServerStats) != 1 || len(r.ServerCores) != 1 {
		t.Fatalf("%d client and %d server statistics, %d core counts; want 1 each", len(r.ClientStats), len(r.ServerStats), len(r.ServerCores))
	}
	for _, ok := range append(r.ClientSuccess, r.ServerSuccess...) {
		if !ok {
			t.Errorf("a worker did not end cleanly: client %v server %v", r.ClientSuccess, r.ServerSuccess)
		}
	}
	// The client was sent to the server worker's benchmark server,
	// on the host of the server worker's address.
	targets := r.Scenario.GetClientConfig().GetServerTargets()
	host, port, _ := net.SplitHostPort(targets[0])
	if len(targets) != 1 || host != "127.0.0.1" || port == "" || targets[0] == serverAddr {
		t.Errorf("server targets %v; want the server worker's benchmark port on 127.0.0.1", targets)
	}
	cs := r.ClientStats[0]
	// The interval runs from the client's handling of the start mark to its
	// handling of the final one; on a busy machine a worker may take a
	// while to answer either, so only a gross mismatch counts.
	if cs.TimeElapsed < seconds*0.25 || cs.TimeElapsed > seconds*2 {
		t.Errorf("the client measured %.2f s; the scenario says %v", cs.TimeElapsed, seconds)
	}
	calls := r.Latencies.GetCount()
	if calls < 100 || calls != cs.Latencies.GetCount() {
		t.Errorf("%v calls merged, the client reported %v; want the same, and at least 100", calls, cs.Latencies.GetCount())
	}
	if want := calls / cs.TimeElapsed; s.Qps < want*0.999 || s.Qps > want*1.001 {
		t.Errorf("qps %v, want calls/elapsed = %v", s.Qps, want)
	}
	if want := s.Qps / float64(r.ServerCores[0]); s.QpsPerServerCore < want*0.999 || s.QpsPerServerCore > want*1.001 {
		t.Errorf("qps per server core %v, want %v", s.QpsPerServerCore, want)
	}
	if !(0 < s.Latency_50 && s.Latency_50 <= s.Latency_90 && s.Latency_90 <= s.Latency_99 && s.Latency_99 <= s.Latency_999) {
		t.Errorf("latency percentiles out of order: %v %v %v %v", s.Latency_50, s.Latency_90, s.Latency_99, s.Latency_999)
	}
	if s.ServerUserTime+s.ServerSystemTime <= 0 || s.ClientUserTime+s.ClientSystemTime <= 0 {
		t.Errorf("no CPU time: server %v+%v%%, client %v+%v%%", s.ServerUserTime, s.ServerSystemTime, s.ClientUserTime, s.ClientSystemTime)
	}
	if !strings.Contains(run.stdout, "QPS: ") || !strings.Contains(run.stdout, "latencies (50/90/95/99/99.9%-ile)") {
		t.Errorf("stdout lacks the summary:\n%s", run.stdout)
	}
}
