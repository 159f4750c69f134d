package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// writeRun writes a routeguide results file with the given unary req/s per
// repetition for 1 and 10 clients, as one half of a run measured in turns
// on one host (compare judges only such halves).
func writeRun(t *testing.T, path string, rps1, rps10 []float64) {
	t.Helper()
	writeRunOf(t, path, "host=test", "run-1", rps1, rps10)
}

// writeRunOf is writeRun on a host key and in a run of one's choice.
func writeRunOf(t *testing.T, path, host, run string, rps1, rps10 []float64) {
	t.Helper()
	env := schema.Environment{CPUModel: "test CPU", CPUCount: 2, Kernel: "Linux 6.1", GoVersion: "go1.26", Platform: "linux_amd64", BuildConfig: "opt",
		Host: host, Extra: map[string]string{schema.ExtraRunID: run}}
	f := schema.NewFile("routeguide", env)
	for _, c := range []struct {
		clients int
		rps     []float64
	}{{1, rps1}, {10, rps10}} {
		f.Results = append(f.Results, schema.Result{
			Scenario:   "go/unary/clients=" + map[int]string{1: "1", 10: "10"}[c.clients],
			Parameters: map[string]any{"impl": "go", "rpc": "unary", "clients": c.clients},
			Status:     schema.StatusOK,
			Metrics:    []schema.Metric{schema.NewMetric("req_per_s", schema.UnitReqPerSec, schema.HigherIsBetter, c.rps)},
		})
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile(path); err != nil {
		t.Fatal(err)
	}
}

func TestReportToDirectory(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, filepath.Join(dir, "in", "go.json"), []float64{9000, 9100, 9200}, []float64{30000, 31000, 30500})
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if status := run([]string{"--out", out, filepath.Join(dir, "in")}, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d, stderr:\n%s", status, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| 10 | 30,500 ±1.6% |") || !strings.Contains(string(md), "33.5%") {
		t.Errorf("report.md lacks the throughput or scaling table:\n%s", md)
	}
	svgs, _ := filepath.Glob(filepath.Join(out, "*.svg"))
	if len(svgs) == 0 {
		t.Fatal("no charts written")
	}
	for _, s := range svgs {
		if !strings.Contains(string(md), "("+filepath.Base(s)+")") {
			t.Errorf("report.md does not link %s", filepath.Base(s))
		}
	}
}

func TestReportToStdout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "go.json")
	writeRun(t, path, []float64{9000}, []float64{30000})
	var stdout, stderr bytes.Buffer
	if status := run([]string{path}, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d, stderr:\n%s", status, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "# Benchmark report") || strings.Contains(stdout.String(), ".svg") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	old, cur := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
	writeRun(t, old, []float64{9000, 9010, 8990, 9005, 8995}, []float64{30000, 30100, 29900, 30050, 29950})
	writeRun(t, cur, []float64{9900, 9910, 9890, 9905, 9895}, []float64{30010, 30090, 29920, 30040, 29960})
	var stdout, stderr bytes.Buffer
	if status := run([]string{"--compare", old, cur}, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d, stderr:\n%s", status, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "| go/unary/clients=1 | req/s ‡ |") || !strings.Contains(out, "**+10.00% (better)** ‡") {
		t.Errorf("1 client should improve significantly:\n%s", out)
	}
	if !strings.Contains(out, "| go/unary/clients=10 | req/s ‡ | 30,000 req/s ± ∞ | 30,010 req/s ± ∞ | ~ |") {
		t.Errorf("10 clients should be insignificant:\n%s", out)
	}
}

func TestCompareFailsOnRegression(t *testing.T) {
	dir := t.TempDir()
	old, cur := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
	// 1 client: req/s 10% lower, significantly; 10 clients: unchanged.
	writeRun(t, old, []float64{9900, 9910, 9890, 9905, 9895}, []float64{30000, 30100, 29900, 30050, 29950})
	writeRun(t, cur, []float64{8910, 8919, 8901, 8914, 8905}, []float64{30010, 30090, 29920, 30040, 29960})
	var stdout, stderr bytes.Buffer
	if status := run([]string{"--compare", old, cur}, &stdout, &stderr); status != 3 {
		t.Fatalf("status %d, want 3; stderr:\n%s", status, stderr.String())
	}
	if want := "routeguide/go/unary/clients=1 req/s: -10.00%"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	if strings.Contains(stderr.String(), "clients=10") {
		t.Errorf("an unchanged cell is reported:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "-10.00% (worse)") {
		t.Errorf("the table lacks the regression:\n%s", stdout.String())
	}
	stdout.Reset()
	stderr.Reset()
	if status := run([]string{"--compare", "--max_regression", "12", old, cur}, &stdout, &stderr); status != 0 {
		t.Fatalf("with a 12%% threshold: status %d, want 0; stderr:\n%s", status, stderr.String())
	}
}

// Compare refuses, with a status of its own and no verdict, results of two
// hosts (4) and results of two runs on one host (5), even when they show a
// regression: a change between them could be the machine's.
func TestCompareRefusesWhatItCannotJudge(t *testing.T) {
	worse := []float64{8910, 8919, 8901, 8914, 8905}
	base := []float64{9900, 9910, 9890, 9905, 9895}
	for _, c := range []struct {
		name             string
		newHost, newRun  string
		status           int
		wantErr, notWant string
	}{
		{"two hosts", "host=other", "run-1", 4, "old and new were measured on different hosts (host keys host=test and host=other)", ""},
		{"two runs", "host=test", "run-2", 5, "old and new were measured in separate actions (runs run-1 and run-2)", ""},
		{"no run recorded", "host=test", "", 5, "measured in separate actions (runs run-1 and —)", ""},
		{"two hosts and two runs", "host=other", "run-2", 4, "measured on different hosts", "separate actions"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			old, cur := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
			writeRunOf(t, old, "host=test", "run-1", base, base)
			writeRunOf(t, cur, c.newHost, c.newRun, worse, base)
			var stdout, stderr bytes.Buffer
			if status := run([]string{"--compare", old, cur}, &stdout, &stderr); status != c.status {
				t.Errorf("status %d, want %d; stderr:\n%s", status, c.status, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.wantErr) || !strings.Contains(stderr.String(), "refused, no verdict") {
				t.Errorf("stderr lacks %q:\n%s", c.wantErr, stderr.String())
			}
			if c.notWant != "" && strings.Contains(stderr.String(), c.notWant) {
				t.Errorf("stderr has %q:\n%s", c.notWant, stderr.String())
			}
			if stdout.Len() != 0 || strings.Contains(stderr.String(), "worse") {
				t.Errorf("a verdict despite the refusal:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			}
		})
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema":"grpcbench.results/v0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		status  int
		wantErr string
	}{
		{"no args", nil, 2, "usage: benchreport"},
		{"bad flag", []string{"--nope"}, 2, "usage: benchreport"},
		{"compare needs two", []string{"--compare", bad}, 2, "exactly two"},
		{"negative threshold", []string{"--compare", "--max_regression", "-1", bad, bad}, 2, "0 or more"},
		{"invalid file", []string{bad}, 1, `want "grpcbench.results/v1"`},
		{"missing file", []string{filepath.Join(dir, "none.json")}, 1, "no such file"},
		{"empty dir", []string{t.TempDir()}, 1, "no .json results files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(tt.args, &stdout, &stderr); got != tt.status {
				t.Errorf("status %d, want %d; stderr:\n%s", got, tt.status, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantErr, stderr.String())
			}
		})
	}
}
