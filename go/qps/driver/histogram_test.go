package driver

import (
	"math"
	"strings"
	"testing"

	"google.golang.org/grpc/benchmark/stats"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

var standardParams = &testpb.HistogramParams{Resolution: 0.01, MaxPossible: 60e9}

func newStandard(t *testing.T) *Histogram {
	t.Helper()
	h, err := NewHistogram(standardParams)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// grpcGoWorkerHistogram is a latency histogram as grpc-go's qps worker
// builds and reports it.
func grpcGoWorkerHistogram(p *testpb.HistogramParams, values []int64) *testpb.HistogramData {
	h := stats.NewHistogram(stats.HistogramOptions{
		NumBuckets:     int(math.Log(p.MaxPossible)/math.Log(1+p.Resolution)) + 1,
		GrowthFactor:   p.Resolution,
		BaseBucketSize: 1 + p.Resolution,
	})
	for _, v := range values {
		h.Add(v)
	}
	b := make([]uint32, len(h.Buckets))
	for i, bucket := range h.Buckets {
		b[i] = uint32(bucket.Count)
	}
	return &testpb.HistogramData{Bucket: b, MinSeen: float64(h.Min), MaxSeen: float64(h.Max),
		Sum: float64(h.Sum), SumOfSquares: float64(h.SumOfSquares), Count: float64(h.Count)}
}

// The driver must bin exactly as the workers do, or their histograms could
// not be merged: grpc-go's worker's histogram of the same values must have
// the same buckets as the driver's.
func TestBucketsAreGrpcGoWorkers(t *testing.T) {
	values := []int64{1, 2, 99, 100, 101, 12_345, 50_000, 50_001, 1_000_000, 7_777_777, 59_000_000_000}
	ours := newStandard(t)
	for _, v := range values {
		ours.Add(float64(v))
	}
	theirs := grpcGoWorkerHistogram(standardParams, values)
	got := ours.Data()
	if len(got.Bucket) != len(theirs.Bucket) {
		t.Fatalf("%d buckets, grpc-go's worker has %d", len(got.Bucket), len(theirs.Bucket))
	}
	for i := range got.Bucket {
		if got.Bucket[i] != theirs.Bucket[i] {
			t.Errorf("bucket %d holds %d values, grpc-go's worker's %d", i, got.Bucket[i], theirs.Bucket[i])
		}
	}
	merged := newStandard(t)
	if err := merged.Merge(theirs); err != nil {
		t.Fatal(err)
	}
	if merged.Count() != float64(len(values)) || merged.minSeen != 1 || merged.maxSeen != 59e9 {
		t.Errorf("merged count %v min %v max %v; want %d, 1, 59e9", merged.Count(), merged.minSeen, merged.maxSeen, len(values))
	}
}

func TestPercentilesInterpolateWithinBuckets(t *testing.T) {
	h := newStandard(t)
	// 100 values spread over 1..100 µs: the median must be near 50 µs,
	// within a bucket's width (1%), and the extremes exact.
	for v := 1; v <= 100; v++ {
		h.Add(float64(v) * 1000)
	}
	for _, c := range []struct{ p, want float64 }{{50, 50_000}, {90, 90_000}, {99, 99_000}} {
		if got := h.Percentile(c.p); math.Abs(got-c.want)/c.want > 0.01 {
			t.Errorf("p%v = %v, want %v within 1%%", c.p, got, c.want)
		}
	}
	if got := h.Percentile(0); got != 1000 {
		t.Errorf("p0 = %v, want the minimum, 1000", got)
	}
	if got := h.Percentile(100); got != 100_000 {
		t.Errorf("p100 = %v, want the maximum, 100000", got)
	}
}

func TestPercentileOfOneValueIsThatValue(t *testing.T) {
	h := newStandard(t)
	h.Add(123_456)
	for _, p := range []float64{50, 99, 99.9} {
		if got := h.Percentile(p); got != 123_456 {
			t.Errorf("p%v of one value = %v, want 123456 (clamped to what was seen)", p, got)
		}
	}
	if got := newStandard(t).Percentile(50); got != 0 {
		t.Errorf("p50 of nothing = %v, want 0", got)
	}
}

func TestMergeRefusesOtherParameters(t *testing.T) {
	h := newStandard(t)
	other := grpcGoWorkerHistogram(&testpb.HistogramParams{Resolution: 0.05, MaxPossible: 60e9}, []int64{5})
	err := h.Merge(other)
	if err == nil || !strings.Contains(err.Error(), "histogram_params") {
		t.Fatalf("merging a histogram of other parameters: %v, want an error naming histogram_params", err)
	}
}

// A worker whose count disagrees with its buckets is refused, not merged
// into percentiles that read past the end.
func TestMergeRefusesInconsistentData(t *testing.T) {
	d := grpcGoWorkerHistogram(standardParams, []int64{100, 200})
	d.Count = 3
	if err := newStandard(t).Merge(d); err == nil || !strings.Contains(err.Error(), "inconsistent") {
		t.Errorf("merging a histogram of 3 values with 2 in its buckets: %v", err)
	}
}

func TestDefaultsAndBadParameters(t *testing.T) {
	h, err := NewHistogram(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(newStandard(t).buckets); len(h.buckets) != want {
		t.Errorf("defaults give %d buckets, want gRPC's %d", len(h.buckets), want)
	}
	for _, p := range []*testpb.HistogramParams{{Resolution: -1, MaxPossible: 10}, {Resolution: 0.5, MaxPossible: 0.1},
		{Resolution: 0.01, MaxPossible: 0.5}, {Resolution: 0.01, MaxPossible: math.NaN()}, {Resolution: math.NaN(), MaxPossible: 10}} {
		if _, err := NewHistogram(p); err == nil {
			t.Errorf("NewHistogram(%v) succeeded", p)
		}
	}
}
