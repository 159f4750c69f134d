package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/go/routeguide/features"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

// fakeLispClient writes a shell script that plays the Lisp client's part
// as far as script says, and returns its path.
func fakeLispClient(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLispClientThatNeverAnswersIsKilled(t *testing.T) {
	path := fakeLispClient(t, "exec sleep 60")
	start := time.Now()
	_, _, err := startLispClientWithin(context.Background(), path, nil, io.Discard, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "waiting for the reply to version: context deadline exceeded") {
		t.Fatalf("got %v, want the version handshake timed out", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to give up", d)
	}
}

func TestLispClientThatAnswersGarbage(t *testing.T) {
	path := fakeLispClient(t, "read line; echo 'hello there'; exec sleep 60")
	_, _, err := startLispClientWithin(context.Background(), path, nil, io.Discard, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "reply to version is not JSON") {
		t.Fatalf("got %v, want a reply that is not JSON", err)
	}
}

func TestLispClientStuckInARepetitionFailsTheRestPlainly(t *testing.T) {
	// Answers the handshake and the open, then never the measure.
	path := fakeLispClient(t, `read line; echo '{"ok":true,"sbcl_version":"SBCL fake"}'
read line; echo '{"ok":true}'
read line; exec sleep 60`)
	lc, version, err := startLispClientWithin(context.Background(), path, nil, io.Discard, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.stop()
	if version != "SBCL fake" {
		t.Errorf("version %q", version)
	}
	cell, err := lc.open(context.Background(), "127.0.0.1:1", scenario{kind: "unary", clients: 1}, perClient, 10, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := cell.Prepare(ctx, harness.Plan{Duration: time.Millisecond}); err == nil ||
		!strings.Contains(err.Error(), "waiting for the reply to measure") {
		t.Fatalf("got %v, want the measure to time out", err)
	}
	if err := cell.WarmUp(context.Background(), harness.Warmup{Ops: 1}); !errors.Is(err, errLispClientBroken) {
		t.Fatalf("after a stuck repetition: got %v, want every later command refused", err)
	}
	if err := cell.close(); err != nil {
		t.Errorf("closing a cell of a client that is gone: %v, want nothing said", err)
	}
}

func TestLispClientErrorRepliesKeepItInStep(t *testing.T) {
	path := fakeLispClient(t, `read line; echo '{"ok":true,"sbcl_version":"SBCL fake"}'
read line; echo '{"error":"connecting to 127.0.0.1:1: refused"}'
read line; echo '{"ok":true}'
read line`)
	lc, _, err := startLispClientWithin(context.Background(), path, nil, io.Discard, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.open(context.Background(), "127.0.0.1:1", scenario{kind: "unary", clients: 1}, perClient, 10, time.Second); err == nil ||
		err.Error() != "the Lisp client: connecting to 127.0.0.1:1: refused" {
		t.Fatalf("got %v, want the client's error", err)
	}
	if _, err := lc.open(context.Background(), "127.0.0.1:2", scenario{kind: "unary", clients: 1}, perClient, 10, time.Second); err != nil {
		t.Fatalf("the next command: %v", err)
	}
	if err := lc.stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// lispClientPath is the real Lisp client, which Bazel passes; plain `go
// test` skips the tests that need it.
var lispClientPath = flag.String("lisp_client", "", "rlocation of //lisp/routeguide:loadgen")

func realLispClient(t *testing.T) *lispClient {
	t.Helper()
	if *lispClientPath == "" {
		t.Skip("no -lisp_client (run under bazel test)")
	}
	lc, version, err := startLispClient(context.Background(), runfile.Path(*lispClientPath), nil, serverproc.TestLog(t, "lisp client"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lc.stop(); err != nil {
			t.Error(err)
		}
	})
	if !strings.HasPrefix(version, "SBCL ") {
		t.Errorf("version %q", version)
	}
	return lc
}

// A server that never answers fails its scenario within the stall grace,
// as with the Go client, and the Lisp client, not killed, measures the next
// scenario against a server that answers.
func TestLispClientAgainstAStuckServerGivesUpInTime(t *testing.T) {
	lc := realLispClient(t)
	cfg := config{impl: "go", duration: 100 * time.Millisecond, conns: perClient,
		bench: harness.Flags{Reps: 2}, lispClient: *lispClientPath, streamMsgs: 10}
	const grace = 8 * time.Second
	stuck := &session{cfg: cfg, impl: "stuck", addr: startStuckServer(t), lisp: lc, work: testWorkload(t, 10), stallGrace: grace}
	start := time.Now()
	res := interleave(testContext(t), []*session{stuck}, scenario{kind: unary, clients: 2})[0]
	if res.Status != schema.StatusError || !strings.Contains(res.Error, "probably stuck") {
		t.Errorf("result %s %q, want an error about a stuck RPC", res.Status, res.Error)
	}
	if res.Scenario != "stuck/unary/clients=2/client=lisp" || res.Parameters["client"] != "lisp" {
		t.Errorf("scenario %q, parameters %v", res.Scenario, res.Parameters)
	}
	if d := time.Since(start); d > grace+2*time.Second {
		t.Errorf("the stuck scenario took %v, more than its grace", d)
	}

	good := &session{cfg: cfg, impl: "go", addr: startTestServer(t, features.Default()), lisp: lc, work: testWorkload(t, 10), stallGrace: grace}
	for _, kind := range []rpcKind{unary, serverStreaming, clientStreaming, bidiStreaming} {
		res = interleave(testContext(t), []*session{good}, scenario{kind: kind, clients: 2})[0]
		if res.Status != schema.StatusOK {
			t.Errorf("%s after the stuck scenario: %s %q", kind, res.Status, res.Error)
		}
	}
}

// The Lisp client's repetition in its three steps, in order and out of it,
// and a budget that cuts the calls short, against a real server.
func TestLispClientRepetitionSteps(t *testing.T) {
	lc := realLispClient(t)
	host, port, err := splitAddr(startTestServer(t, features.Default()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	send := func(reply any, kv ...any) error {
		cmd := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			cmd[kv[i].(string)] = kv[i+1]
		}
		return lc.exchange(ctx, cmd, reply)
	}
	refused := func(want string, kv ...any) {
		t.Helper()
		if err := send(nil, kv...); err == nil || err.Error() != want {
			t.Errorf("%v: got %v, want %q", kv, err, want)
		}
	}
	must := func(reply any, kv ...any) {
		t.Helper()
		if err := send(reply, kv...); err != nil {
			t.Fatalf("%v: %v", kv, err)
		}
	}
	must(nil, "command", "open", "cell", 1, "host", host, "port", port, "rpc", "unary", "clients", 2,
		"conns", "per-client", "stream_msgs", 10, "call_timeout_ms", 5000)
	refused("no repetition has run since the last warm-up or measure", "command", "latencies", "cell", 1)
	refused("no repetition is prepared: send measure first", "command", "start", "cell", 1)
	must(nil, "command", "measure", "cell", 1, "duration_ns", 100_000_000)
	refused("a repetition is prepared: start it first", "command", "warm_up", "cell", 1, "ops", 10)
	refused("a repetition is prepared already: start it first", "command", "measure", "cell", 1, "duration_ns", 1)
	var rep startReply
	must(&rep, "command", "start", "cell", 1)
	if rep.Ops == 0 || rep.Errors != 0 || rep.CutShort || rep.WallNs < 100_000_000 || rep.CPUUserNs+rep.CPUSystemNs == 0 {
		t.Errorf("a repetition of 100 ms: %+v", rep)
	}
	var lat struct {
		Latency struct {
			Count int64 `json:"count"`
		} `json:"latency"`
	}
	must(&lat, "command", "latencies", "cell", 1)
	if lat.Latency.Count != rep.Ops {
		t.Errorf("%d latencies for %d calls", lat.Latency.Count, rep.Ops)
	}
	// A budget already spent when the calls could start: none runs.
	must(nil, "command", "measure", "cell", 1, "duration_ns", 1_000_000_000, "budget_ns", 1)
	must(&rep, "command", "start", "cell", 1)
	if !rep.CutShort || rep.Ops != 0 || rep.WallNs > 500_000_000 {
		t.Errorf("a spent budget: %+v, want cut short at once", rep)
	}
	var warm struct {
		CutShort bool `json:"cut_short"`
	}
	must(&warm, "command", "warm_up", "cell", 1, "duration_ns", 1_000_000_000, "budget_ns", 1)
	if !warm.CutShort {
		t.Error("a warm-up past its budget is not cut short")
	}
	must(nil, "command", "close", "cell", 1)
	refused("cell 1 is not open", "command", "start", "cell", 1)
}
