package serverproc

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// loggedServer starts script under Start and returns it with its log, once
// the log holds last (the script's final line): by then every line before
// it has been read.
func loggedServer(t *testing.T, script, last string) (*Process, *syncBuffer) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process groups are a Linux feature")
	}
	log := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := Start(ctx, Spec{Argv: []string{"/bin/sh", "-c", script}, ReadyTimeout: 5 * time.Second,
		StopGrace: 5 * time.Second, Log: log, Check: CheckLoopback})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(log.String(), last) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never held %q: %q", last, log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p, log
}

// The runtime line after the announcement is read from the server, and
// still reaches the log, as does every other line.
func TestServerProcessReadsItsRuntimeLine(t *testing.T) {
	p, log := loggedServer(t,
		`echo listening on 127.0.0.1:1; echo runtime cpus=3 gogc=100 junk; echo other; echo end; exec sleep 30`, "end\n")
	if p.Parallelism() != 3 || p.Runtime()["gogc"] != "100" {
		t.Errorf("runtime = %v, want cpus=3 gogc=100", p.Runtime())
	}
	if _, ok := p.Runtime()["junk"]; ok {
		t.Errorf("a field without = was kept: %v", p.Runtime())
	}
	if !strings.Contains(log.String(), "runtime cpus=3 gogc=100 junk\nother\n") {
		t.Errorf("log = %q, want the runtime line and the next", log.String())
	}
}

// Only the line right after the announcement is the runtime line: not a
// later one, nor the end of a line longer than the read buffer.
func TestServerProcessTakesNoOtherLineForItsRuntime(t *testing.T) {
	for _, script := range []string{
		`echo listening on 127.0.0.1:1; echo hello; echo runtime cpus=9; echo end; exec sleep 30`,
		`echo listening on 127.0.0.1:1; echo ` + strings.Repeat("x", 4096) + `runtime cpus=9; echo end; exec sleep 30`,
	} {
		p, _ := loggedServer(t, script, "end\n")
		if p.Runtime() != nil || p.Parallelism() != 0 {
			t.Errorf("runtime = %v, parallelism = %d; want none", p.Runtime(), p.Parallelism())
		}
	}
}

// Samples pair with repetitions: a cell sampled fewer times than it ran
// records none, and parallelism and the live heap only where every sample
// had them.
func TestSampleMetrics(t *testing.T) {
	full := []Sample{{RSS: 1, Threads: 2, Parallelism: 1}, {RSS: 1, Threads: 2, Parallelism: 1}}
	if got := SampleMetrics(3, full, true); got != nil {
		t.Errorf("3 reps, 2 samples: %v, want none", got)
	}
	names := func(ms []Sample) []string {
		var out []string
		for _, m := range SampleMetrics(len(ms), ms, true) {
			out = append(out, m.Name)
		}
		return out
	}
	if got := strings.Join(names(full), ","); got != "server_threads,server_parallelism,server_rss" {
		t.Errorf("metrics = %s", got)
	}
	full[0].LiveHeap, full[1].LiveHeap = 1024, 2048
	if got := strings.Join(names(full), ","); got != "server_threads,server_parallelism,server_rss,server_live_heap" {
		t.Errorf("with the live heap: metrics = %s", got)
	}
	full[1].Parallelism, full[1].LiveHeap = 0, 0
	if got := strings.Join(names(full), ","); got != "server_threads,server_rss" {
		t.Errorf("with one sample unsaid: metrics = %s", got)
	}
}
