package driver

import (
	"fmt"
	"math"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// The histogram parameters gRPC's workers and drivers use when a scenario
// names none: 1% wide buckets, up to one minute in nanoseconds.
const (
	defaultResolution  = 0.01
	defaultMaxPossible = 60e9
)

// Histogram is gRPC's log-bucket latency histogram, the one behind
// grpc.testing.HistogramData: bucket 0 holds [0, m) and bucket n holds
// [m^n, m^(n+1)), where m = 1 + resolution. The driver merges the workers'
// histograms into one and reads the scenario's percentiles from it, so its
// bucket layout and its interpolation must be gRPC's: two workers' figures
// are comparable only because every worker and driver bins alike.
type Histogram struct {
	multiplier    float64
	logMultiplier float64
	buckets       []uint32
	minSeen       float64
	maxSeen       float64
	sum           float64
	sumOfSquares  float64
	count         float64
}

// NewHistogram is an empty histogram with the scenario's parameters (gRPC's
// defaults for those that are zero).
func NewHistogram(p *testpb.HistogramParams) (*Histogram, error) {
	resolution, maxPossible := p.GetResolution(), p.GetMaxPossible()
	if resolution == 0 {
		resolution = defaultResolution
	}
	if maxPossible == 0 {
		maxPossible = defaultMaxPossible
	}
	// The comparisons are written so that NaN fails them.
	if !(resolution > 0 && maxPossible >= 1 && maxPossible > resolution) || math.IsInf(maxPossible, 0) || math.IsInf(resolution, 0) {
		return nil, fmt.Errorf("histogram_params: resolution %v and max_possible %v are not a histogram (need resolution > 0 and max_possible >= 1)",
			p.GetResolution(), p.GetMaxPossible())
	}
	h := &Histogram{multiplier: 1 + resolution, logMultiplier: math.Log(1 + resolution), minSeen: maxPossible}
	n := int(math.Log(maxPossible)/h.logMultiplier) + 1
	if n < 1 || n > 100_000_000 {
		return nil, fmt.Errorf("histogram_params: %d buckets are too many", n)
	}
	h.buckets = make([]uint32, n)
	return h, nil
}

// Merge adds a worker's histogram. Its buckets must be laid out as h's: a
// worker that binned with other parameters cannot be merged, and saying so
// beats percentiles that silently mean something else.
func (h *Histogram) Merge(d *testpb.HistogramData) error {
	if d == nil {
		return nil
	}
	if len(d.Bucket) != len(h.buckets) {
		return fmt.Errorf("a histogram of %d buckets cannot merge into one of %d: the worker binned with other histogram_params",
			len(d.Bucket), len(h.buckets))
	}
	var inBuckets float64
	for _, c := range d.Bucket {
		inBuckets += float64(c)
	}
	if inBuckets != d.Count {
		return fmt.Errorf("a histogram of %v values holds %v in its buckets: the worker's histogram is inconsistent", d.Count, inBuckets)
	}
	h.sum += d.Sum
	h.sumOfSquares += d.SumOfSquares
	h.count += d.Count
	h.minSeen = math.Min(h.minSeen, d.MinSeen)
	h.maxSeen = math.Max(h.maxSeen, d.MaxSeen)
	for i, c := range d.Bucket {
		// Saturating: a bucket past 2^32-1 values stays full rather than
		// wrapping to a small count.
		h.buckets[i] = uint32(min(uint64(h.buckets[i])+uint64(c), math.MaxUint32))
	}
	return nil
}

// Count is the number of values merged.
func (h *Histogram) Count() float64 { return h.count }

// Percentile is the value below which p percent of the values lie, read as
// gRPC reads it: values are taken as spread evenly through their bucket,
// and the answer is kept within the smallest and largest value seen.
func (h *Histogram) Percentile(p float64) float64 {
	return h.thresholdForCountBelow(h.count * p / 100)
}

func (h *Histogram) bucketStart(i int) float64 { return math.Pow(h.multiplier, float64(i)) }

func (h *Histogram) thresholdForCountBelow(below float64) float64 {
	switch {
	case h.count == 0:
		return 0
	case below <= 0:
		return h.minSeen
	case below >= h.count:
		return h.maxSeen
	}
	// The first bucket at which the running count reaches below.
	lower, soFar := 0, 0.0
	for ; lower < len(h.buckets); lower++ {
		soFar += float64(h.buckets[lower])
		if soFar >= below {
			break
		}
	}
	if lower == len(h.buckets) {
		return h.maxSeen // saturated buckets hold fewer than count
	}
	if soFar == below {
		// Exactly at a bucket's end: the threshold lies halfway across the
		// empty buckets that follow it.
		upper := lower + 1
		for upper < len(h.buckets) && h.buckets[upper] == 0 {
			upper++
		}
		return (h.bucketStart(lower) + h.bucketStart(upper)) / 2
	}
	lo, hi := h.bucketStart(lower), h.bucketStart(lower+1)
	v := hi - (hi-lo)*(soFar-below)/float64(h.buckets[lower])
	return math.Min(math.Max(v, h.minSeen), h.maxSeen)
}

// Data is the histogram as the protocol carries it.
func (h *Histogram) Data() *testpb.HistogramData {
	return &testpb.HistogramData{
		Bucket:       append([]uint32(nil), h.buckets...),
		MinSeen:      h.minSeen,
		MaxSeen:      h.maxSeen,
		Sum:          h.sum,
		SumOfSquares: h.sumOfSquares,
		Count:        h.count,
	}
}

// bucketFor is the bucket of value x, clamped to the histogram's range.
func (h *Histogram) bucketFor(x float64) int {
	x = math.Max(x, 1)
	i := int(math.Log(x) / h.logMultiplier)
	return min(i, len(h.buckets)-1)
}

// Add records one value, binned as gRPC's workers bin it. The driver itself
// only merges; its tests build workers' histograms with Add.
func (h *Histogram) Add(x float64) {
	h.sum += x
	h.sumOfSquares += x * x
	h.count++
	h.minSeen = math.Min(h.minSeen, x)
	h.maxSeen = math.Max(h.maxSeen, x)
	h.buckets[h.bucketFor(x)]++
}
