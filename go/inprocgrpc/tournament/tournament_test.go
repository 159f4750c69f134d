package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// TestTinyRun runs one scenario for every competitor, a few operations
// each, and checks the results file and the printed table.
func TestTinyRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.json")
	var stdout bytes.Buffer
	args := []string{"-scenarios", "^unary/payload=32/", "-n", "20", "-reps", "1", "-warmup", "0", "-out", out}
	if err := run(context.Background(), args, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(data); err != nil {
		t.Fatalf("the results file is invalid: %v", err)
	}
	f, err := schema.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != len(competitors) {
		t.Fatalf("%d results, want one per competitor (%d)", len(f.Results), len(competitors))
	}
	for _, r := range f.Results {
		if r.Status != schema.StatusOK {
			t.Errorf("%s: %s %s", r.Scenario, r.Status, r.Error)
		}
	}
	table := stdout.String()
	for _, want := range []string{"ns/op vs grpchan", "| ours |", "| grpc-loopback |", "| ours-shared |", "| grpchan-shared |"} {
		if !strings.Contains(table, want) {
			t.Errorf("the printed report lacks %q:\n%s", want, table)
		}
	}
}

// TestScenarioNames checks that every scenario of the prior tournament
// (docs/prior-results.md) is there, with the parameters the report layout
// groups by.
func TestScenarioNames(t *testing.T) {
	var names []string
	for _, w := range workloads() {
		names = append(names, w.scenario("ours"))
		p := w.params("ours")
		if p["workload"] == nil || p["payload"] == nil {
			t.Errorf("%s: parameters %v lack workload or payload", w.scenario("ours"), p)
		}
	}
	want := []string{
		"unary/payload=32/ours", "unary/payload=64/ours", "unary/payload=1024/ours",
		"unary/payload=10240/ours", "unary/payload=102400/ours", "unary/payload=1048576/ours",
		"server_stream/ours", "bidi/ours",
		"unary_concurrent/goroutines=10/ours", "unary_concurrent/goroutines=50/ours",
		"unary_concurrent/goroutines=100/ours", "latency/ours",
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("scenarios:\n got %q\nwant %q", names, want)
	}
}

// TestStreamingScenarios runs the streaming workloads briefly, on every
// competitor, so that their operations are exercised too.
func TestStreamingScenarios(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.json")
	args := []string{"-scenarios", "^(server_stream|bidi|latency)/", "-n", "5", "-latency_calls", "3", "-reps", "1", "-warmup", "0", "-out", out}
	if err := run(context.Background(), args, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	f, err := schema.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, c := range competitors {
		if c.workload == "" {
			want += 3
		}
	}
	if len(f.Results) != want {
		t.Fatalf("%d results, want %d (every competitor that enters every workload)", len(f.Results), want)
	}
	for _, r := range f.Results {
		if r.Status != schema.StatusOK {
			t.Errorf("%s: %s %s", r.Scenario, r.Status, r.Error)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-scenarios", "("},
		{"-duration", "0"},
		{"-latency_calls", "0"},
		{"-scenarios", "no such scenario"},
	} {
		var usage usageError
		if err := run(context.Background(), args, io.Discard, io.Discard); !errors.As(err, &usage) {
			t.Errorf("run %q: %v, want a usage error", args, err)
		}
	}
}
