package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
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
	if _, err := cell.Measure(ctx, harness.Plan{Duration: time.Millisecond}); err == nil ||
		!strings.Contains(err.Error(), "waiting for the reply to measure") {
		t.Fatalf("got %v, want the measure to time out", err)
	}
	if err := cell.WarmUp(context.Background(), harness.Warmup{Ops: 1}); err == nil ||
		!strings.HasPrefix(err.Error(), "not run: the Lisp client failed earlier") {
		t.Fatalf("after a stuck repetition: got %v, want every later command refused", err)
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
