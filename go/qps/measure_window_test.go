package qps_test

import (
	"context"
	"testing"
	"time"

	qpsdriver "github.com/grpcbench/grpcbench/go/qps/driver"
	"github.com/grpcbench/grpcbench/go/qps/scenarios"
)

// OnMeasure brackets the measured interval, not the warm-up: it is called
// once as the interval begins, after the scenario's warm-up, and once as it
// ends, after its measured seconds, so that what a caller reads there
// covers what the workers' statistics cover.
func TestOnMeasureBracketsTheMeasuredInterval(t *testing.T) {
	_, serverAddr := startKind(t, "server worker", goKind)
	_, clientAddr := startKind(t, "client worker", goKind)
	shape, err := scenarios.Named("unary_ping_pong")
	if err != nil {
		t.Fatal(err)
	}
	var calls []bool
	var at []time.Time
	start := time.Now()
	r, err := qpsdriver.Run(context.Background(), shape.Scenario(0, 1, 1), qpsdriver.Options{
		Workers: []string{serverAddr, clientAddr}, SetupTimeout: 30 * time.Second,
		OnMeasure: func(begins bool) {
			calls = append(calls, begins)
			at = append(at, time.Now())
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || !calls[0] || calls[1] {
		t.Fatalf("OnMeasure called with %v, want [true false]", calls)
	}
	if warm := at[0].Sub(start); warm < time.Second {
		t.Errorf("the interval began %v after the run started, within its 1 s warm-up", warm)
	}
	if end := at[1].Sub(start); end < 2*time.Second {
		t.Errorf("the interval ended %v after the run started, within its 1 s warm-up and 1 s measured", end)
	}
	if r.Summary.GetQps() <= 0 {
		t.Errorf("no calls measured: %v", r.Summary)
	}
}
