package harness

import (
	"testing"
	"time"
)

// Pressure is the stall time between two readings over the wall time, and
// a metric only where every repetition has it.
func TestPressure(t *testing.T) {
	p, ok := pressure(cpuStall{10 * time.Second, true}, cpuStall{10*time.Second + 500*time.Millisecond, true}, time.Second)
	if !ok || p != 0.5 {
		t.Errorf("pressure = %v, %v; want 0.5", p, ok)
	}
	if _, ok := pressure(cpuStall{}, cpuStall{time.Second, true}, time.Second); ok {
		t.Error("a pressure from a missing reading")
	}
	reps := []Rep{{Wall: time.Second, CPUPressure: 0.5, HasCPUPressure: true}, {Wall: time.Second, CPUPressure: 0.25, HasCPUPressure: true}}
	if m := pressureMetric(reps); len(m) != 1 || m[0].Reps[0] != 0.5 || m[0].Reps[1] != 0.25 {
		t.Errorf("got %+v", m)
	}
	reps[1].HasCPUPressure = false
	if pressureMetric(reps) != nil {
		t.Error("a metric although one repetition could not read it")
	}
}

// Steal is the "cpu" line's eighth field, in clock ticks, over the wall
// time and the CPUs.
func TestSteal(t *testing.T) {
	stat := []byte("cpu  6387284 34506 1320805 3935043 32707 0 95278 12695 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
	d, ok := parseSteal(stat, 100)
	if !ok || d != 126950*time.Millisecond {
		t.Fatalf("parseSteal = %v, %v", d, ok)
	}
	if n := statCPUs(stat); n != 1 {
		t.Errorf("statCPUs = %d, want 1 (the cpu0 line)", n)
	}
	if _, ok := parseSteal([]byte("intr 1 2\n"), 100); ok {
		t.Error("a file without a cpu line gave a steal")
	}
	share, ok := stealShare(stealReading{time.Second, true, 2}, stealReading{1500 * time.Millisecond, true, 2}, time.Second, 2)
	if !ok || share != 0.25 {
		t.Errorf("stealShare = %v, %v; want 0.25", share, ok)
	}
	if _, ok := stealShare(stealReading{}, stealReading{time.Second, true, 2}, time.Second, 2); ok {
		t.Error("a missing reading gave a share")
	}
	reps := []Rep{{CPUSteal: 0.1, HasCPUSteal: true}, {CPUSteal: 0.2, HasCPUSteal: true}}
	if m := stealMetric(reps); len(m) != 1 || m[0].Reps[1] != 0.2 {
		t.Errorf("stealMetric = %v", m)
	}
	reps[1].HasCPUSteal = false
	if stealMetric(reps) != nil {
		t.Error("a repetition without steal gave a metric")
	}
}
