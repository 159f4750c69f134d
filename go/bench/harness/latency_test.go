package harness

import (
	"testing"
	"time"
)

// 1..1000ns are recorded exactly at three significant digits, so the
// percentiles are the textbook ones.
func TestPercentilesOfKnownSet(t *testing.T) {
	h := newLatencyHistogram()
	for v := 1000; v >= 1; v-- { // order must not matter
		recordLatency(h, time.Duration(v))
	}
	got := percentilesOf(h)
	want := Percentiles{Count: 1000, P50: 500, P90: 900, P95: 950, P99: 990, P999: 999, Max: 1000}
	if got != want {
		t.Errorf("percentiles = %+v, want %+v", got, want)
	}
}

// Merging per-worker histograms gives the same percentiles as recording
// everything in one.
func TestMergedWorkerHistograms(t *testing.T) {
	workers := make([]*worker, 4)
	for i := range workers {
		workers[i] = &worker{latency: newLatencyHistogram()}
	}
	for v := 1; v <= 1000; v++ {
		recordLatency(workers[v%4].latency, time.Duration(v))
	}
	merged := newLatencyHistogram()
	recordLatency(merged, 5) // stale content from a previous repetition
	mergeLatencies(merged, workers)
	want := Percentiles{Count: 1000, P50: 500, P90: 900, P95: 950, P99: 990, P999: 999, Max: 1000}
	if got := percentilesOf(merged); got != want {
		t.Errorf("merged percentiles = %+v, want %+v", got, want)
	}
}

func TestOutOfRangeLatenciesAreCounted(t *testing.T) {
	h := newLatencyHistogram()
	recordLatency(h, 0)
	recordLatency(h, 2*time.Hour)
	p := percentilesOf(h)
	if p.Count != 2 {
		t.Errorf("count = %d, want 2", p.Count)
	}
	if p.Max < 10*time.Minute {
		t.Errorf("max = %v, want the clamp at 10m", p.Max)
	}
}

func TestPercentilesOfEmptyHistogram(t *testing.T) {
	if got := percentilesOf(newLatencyHistogram()); got != (Percentiles{}) {
		t.Errorf("empty histogram percentiles = %+v", got)
	}
}

// Percentiles on a realistic spread: values are exact only to three
// significant digits, so compare within the histogram's resolution.
func TestPercentilesResolution(t *testing.T) {
	h := newLatencyHistogram()
	for i := 1; i <= 100; i++ {
		recordLatency(h, time.Duration(i)*time.Millisecond)
	}
	p := percentilesOf(h)
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{{"p50", p.P50, 50 * time.Millisecond}, {"p99", p.P99, 99 * time.Millisecond}, {"max", p.Max, 100 * time.Millisecond}} {
		if diff := c.got - c.want; diff < 0 || diff > c.want/1000 {
			t.Errorf("%s = %v, want %v within 0.1%%", c.name, c.got, c.want)
		}
	}
}
