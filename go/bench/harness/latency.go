package harness

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histogram range and precision. Three significant digits keep the
// relative error of every percentile under 0.1%; values from 1ns to 10
// minutes cover a loopback unary call and a stuck stream alike. Each
// histogram takes about 250 KiB, allocated once per worker and run.
const (
	minTrackedLatency   = 1
	maxTrackedLatency   = int64(10 * time.Minute)
	latencySignificance = 3
)

func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(minTrackedLatency, maxTrackedLatency, latencySignificance)
}

// recordLatency clamps d into the tracked range: an out-of-range value is
// still an operation that happened and must be counted.
func recordLatency(h *hdrhistogram.Histogram, d time.Duration) {
	v := int64(d)
	if v < minTrackedLatency {
		v = minTrackedLatency
	}
	if v > maxTrackedLatency {
		v = maxTrackedLatency
	}
	_ = h.RecordValue(v) // cannot fail: v is in range
}

// Percentiles summarises the latency of the successful operations of one
// repetition.
type Percentiles struct {
	Count                         int64
	P50, P90, P95, P99, P999, Max time.Duration
}

// percentilesOf reads the usual percentiles from h. HdrHistogram reports the
// highest value equivalent to the true percentile at its precision.
func percentilesOf(h *hdrhistogram.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	q := h.ValueAtPercentiles([]float64{50, 90, 95, 99, 99.9})
	return Percentiles{
		Count: h.TotalCount(),
		P50:   time.Duration(q[50]),
		P90:   time.Duration(q[90]),
		P95:   time.Duration(q[95]),
		P99:   time.Duration(q[99]),
		P999:  time.Duration(q[99.9]),
		Max:   time.Duration(h.Max()),
	}
}

// mergeLatencies combines the per-worker histograms after a repetition. Each
// worker records into its own histogram, so the hot path takes no lock; the
// merge happens once, after the clock has stopped.
func mergeLatencies(into *hdrhistogram.Histogram, workers []*worker) {
	into.Reset()
	for _, w := range workers {
		into.Merge(w.latency)
	}
}
