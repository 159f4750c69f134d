package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/cri/mockcri"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var (
	buildOnce   sync.Once
	builtServer string
	buildErr    error
)

// mockcriBinary is the mock server to start: under Bazel the one in the
// test's runfiles ($MOCKCRI), under `go test` one built once from source.
func mockcriBinary(t *testing.T) string {
	t.Helper()
	if rel := os.Getenv("MOCKCRI"); rel != "" {
		return runfile.Path(rel)
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cribench-test-")
		if err != nil {
			buildErr = err
			return
		}
		builtServer = filepath.Join(dir, "mockcri")
		out, err := exec.Command("go", "build", "-o", builtServer, "github.com/grpcbench/grpcbench/go/cri/mockcri/cmd/mockcri").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Skipf("cannot build mockcri: %v", buildErr)
	}
	return builtServer
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtServer != "" {
		os.RemoveAll(filepath.Dir(builtServer))
	}
	os.Exit(code)
}

// The server process starts, announces a unix socket, serves, reports its
// own heap counters and pid, and stops on SIGTERM, taking its socket along.
func TestServerProcessLifecycle(t *testing.T) {
	bin := mockcriBinary(t)
	dir, sock, err := mockcri.SocketDir("mockcri.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var log strings.Builder
	proc, ep, err := startServer(testContext(t), []string{bin, "-listen", "unix://" + sock, "-containers", "12"}, nil, harness.SharedLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Stop()
	if ep != (mockcri.Endpoint{Network: "unix", Address: sock}) {
		t.Errorf("announced %v, want %s", ep, sock)
	}
	sess, err := openSession(testContext(t), ep, proc, mockcri.Transport{})
	if err != nil {
		t.Fatal(err)
	}
	if sess.containers != 12 || sess.cpu == nil || sess.debug == nil {
		t.Errorf("session: %d containers, cpu %v, debug %v", sess.containers, sess.cpu, sess.debug)
	}
	sess.close()

	if err := proc.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestServerThatFailsToStart(t *testing.T) {
	bin := mockcriBinary(t)
	_, _, err := startServer(testContext(t), []string{bin, "-containers", "-5"}, nil, harness.SharedLog(&strings.Builder{}))
	if err == nil || !strings.Contains(err.Error(), "exit status 2") {
		t.Errorf("got %v, want an exit before announcing", err)
	}
}

// A tiny run with a started server process over both transports: server
// CPU and heap are measured apart, and the results validate.
func TestRunWithServerProcess(t *testing.T) {
	bin := mockcriBinary(t)
	for _, transport := range []string{"unix", "tcp"} {
		code, file, stdout := readResults(t, "-server", bin, "-transport", transport,
			"-containers", "16", "-annotations", "8", "-n", "5", "-reps", "2", "-warmup", "1", "-per_chunk", "4")
		if code != harness.ExitOK {
			t.Fatalf("%s: exit %d\n%s", transport, code, stdout)
		}
		for _, r := range file.Results {
			if r.Status != "ok" || r.Parameters["transport"] != transport {
				t.Errorf("%s: %s %v", r.Scenario, r.Status, r.Parameters)
			}
			for _, name := range []string{"server_cpu", schema.MetricServerBytesPerOp, schema.MetricServerAllocsPerOp} {
				if _, ok := r.Metric(name); !ok {
					t.Errorf("%s over %s: no %s", r.Scenario, transport, name)
				}
			}
			if m, _ := r.Metric(schema.MetricServerBytesPerOp); m.Median <= 0 {
				t.Errorf("%s: server bytes/op %v", r.Scenario, m.Median)
			}
		}
	}
}
