package harness

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestProgressThrottles(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, 2*time.Second, "[routeguide] unary/clients=10")
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }

	p.maybe("rep 1/3: %d req/s", 30000) // first line always passes
	now = now.Add(time.Second)
	p.maybe("rep 2/3: %d req/s", 30123) // within the interval: dropped
	p.force("rep 3/3: %d req/s", 30500) // forced: printed
	now = now.Add(2 * time.Second)
	p.maybe("later") // an interval after the last line: printed

	want := "[routeguide] unary/clients=10 rep 1/3: 30000 req/s\n" +
		"[routeguide] unary/clients=10 rep 3/3: 30500 req/s\n" +
		"[routeguide] unary/clients=10 later\n"
	if out.String() != want {
		t.Errorf("got:\n%swant:\n%s", out.String(), want)
	}
}

func TestProgressNilWriterPrintsNothing(t *testing.T) {
	p := newProgress(nil, 0, "x")
	p.force("a")
	p.maybe("b")
	p.ticker("rep", time.Now(), &tickets{limit: 1})() // starts and stops nothing
}

// A run reports its last repetition and its warm-up, whatever the
// throttle, so the terminal always shows the outcome.
func TestRunPrintsProgress(t *testing.T) {
	var out bytes.Buffer
	var calls atomic.Int64
	r := &Runner{
		Suite: "routeguide", Scenario: "unary/clients=10",
		Plan:             Plan{Workers: 2, Ops: 100, Reps: 3, Warmup: Warmup{Ops: 10}},
		Progress:         &out,
		ProgressInterval: time.Hour,
	}
	if _, err := r.Run(context.Background(), countingOp(&calls)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want warm-up and last rep:\n%s", len(lines), out.String())
	}
	if lines[0] != "[routeguide] unary/clients=10 warm-up 10" {
		t.Errorf("line 1 = %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "[routeguide] unary/clients=10 rep 3/3: ") || !strings.Contains(lines[1], " req/s") {
		t.Errorf("line 2 = %q", lines[1])
	}
}
