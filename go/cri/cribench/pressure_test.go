package main

import (
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
)

func TestParseCPUStall(t *testing.T) {
	psi := "some avg10=93.20 avg60=95.02 avg300=96.40 total=3457443044\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	if d, ok := parseCPUStall([]byte(psi)); !ok || d != 3457443044*time.Microsecond {
		t.Errorf("got %v, %v", d, ok)
	}
	for _, bad := range []string{"", "full avg10=0 total=5\n", "some avg10=1 total=x\n"} {
		if _, ok := parseCPUStall([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// Pressure is the stall time within each repetition over its wall time.
func TestPressureMetric(t *testing.T) {
	reps := []harness.Rep{{Wall: time.Second}, {Wall: 2 * time.Second}}
	stalls := []time.Duration{10 * time.Second, 10*time.Second + 500*time.Millisecond, 20 * time.Second, 21 * time.Second}
	m := pressureMetric(reps, stalls)
	if len(m) != 1 || m[0].Reps[0] != 0.5 || m[0].Reps[1] != 0.5 {
		t.Errorf("got %+v", m)
	}
	if pressureMetric(reps, stalls[:3]) != nil {
		t.Error("a metric from missing readings")
	}
}
