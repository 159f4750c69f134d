package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/cri/mockcri"
)

// startInProcess serves a mock inventory in the test process on a unix
// socket and returns its endpoint.
func startInProcess(t *testing.T, cfg mockcri.Config) mockcri.Endpoint {
	t.Helper()
	dir, sock, err := mockcri.SocketDir("cri.sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := mockcri.Start(mockcri.MustGenerate(cfg), mockcri.Endpoint{Network: "unix", Address: sock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv.Endpoint
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// readResults runs cri-bench with args plus -out and returns the exit code
// and the validated results file.
func readResults(t *testing.T, args ...string) (int, *schema.File, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results.json")
	var stdout, stderr strings.Builder
	code := run(testContext(t), append(append([]string{"cri-bench"}, args...), "-out", out), &stdout, &stderr)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no results file (exit %d): %v\nstderr:\n%s", code, err, stderr.String())
	}
	if err := schema.Validate(data); err != nil {
		t.Fatalf("results do not validate: %v\n%s", err, data)
	}
	var file schema.File
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	return code, &file, stdout.String()
}

// A tiny run against an in-process server: every method, valid results,
// the table and the report on stdout.
func TestRunInProcess(t *testing.T) {
	ep := startInProcess(t, mockcri.Config{Containers: 20, Labels: 4, Annotations: 32, ContainersPerPod: 2, Seed: 1})
	code, file, stdout := readResults(t, "-endpoint", ep.String(), "-n", "6", "-reps", "2", "-warmup", "2", "-per_chunk", "8,32")
	if code != harness.ExitOK {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if file.Suite != "cri" || len(file.Results) != 4 {
		t.Fatalf("suite %q with %d results, want cri with 4", file.Suite, len(file.Results))
	}
	for _, r := range file.Results {
		if r.Status != schema.StatusOK {
			t.Errorf("%s: %s %s", r.Scenario, r.Status, r.Error)
		}
		if r.Parameters["containers"] != float64(20) || r.Parameters["annotations"] != float64(32) {
			t.Errorf("%s: parameters %v", r.Scenario, r.Parameters)
		}
		// The server runs in this process: its CPU and heap are the
		// client's, and no separate server figures are reported.
		if _, ok := r.Metric("server_cpu"); ok {
			t.Errorf("%s: server_cpu for an in-process server", r.Scenario)
		}
		if m, ok := r.Metric("ops"); !ok || m.Median != 6 {
			t.Errorf("%s: ops %v", r.Scenario, m)
		}
	}
	if m, _ := file.Results[2].Metric("msg_per_s"); m.Median <= 0 {
		t.Errorf("chunked per 8 of 20 containers reports no msg/s")
	}
	for _, want := range []string{"| chunked/containers=20/annotations=32/per_chunk=8 |", "## CRI gRPC benchmark"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// A server that serves other containers than the flags expect fails the
// run, with the reason in the results.
func TestRunEndpointMismatch(t *testing.T) {
	ep := startInProcess(t, mockcri.DefaultConfig(5))
	code, file, _ := readResults(t, "-endpoint", ep.String(), "-containers", "6", "-n", "2", "-reps", "1", "-mode", "list")
	if code != harness.ExitFailed || len(file.Results) != 1 || file.Results[0].Status != schema.StatusError ||
		!strings.Contains(file.Results[0].Error, "lists 5 containers") {
		t.Errorf("exit %d, results %+v", code, file.Results)
	}
}

// Each listing is checked: a server whose answers are short is all errors,
// not fast.
func TestListerCountsWrongAnswersAsErrors(t *testing.T) {
	ep := startInProcess(t, mockcri.DefaultConfig(5))
	conn, err := mockcri.Dial(ep)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	l := newLister(conn, 6, time.Minute)
	for _, s := range []scenario{{method: methodList}, {method: methodStream}, {method: methodChunked, perChunk: 2}} {
		if _, err := l.op(s)(testContext(t), 0); err == nil || !strings.Contains(err.Error(), "listed 5 containers, want 6") {
			t.Errorf("%s: %v", s.method, err)
		}
	}
	right := newLister(conn, 5, time.Minute)
	msgs, err := right.op(scenario{method: methodChunked, perChunk: 2})(testContext(t), 0)
	if err != nil || msgs != 3 {
		t.Errorf("chunked per 2 of 5: %d messages, %v; want 3", msgs, err)
	}
}
