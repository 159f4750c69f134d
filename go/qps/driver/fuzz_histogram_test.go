package driver

import (
	"encoding/binary"
	"math"
	"testing"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// FuzzHistogram builds histograms from arbitrary parameters, and merges
// into them a worker's histogram of arbitrary values (eight bytes each, as
// float64 bits) and arbitrary histogram data, as workers report them.
// Parameters are refused or give a bounded histogram; data whose buckets
// do not add up to its count is refused; and once merged, the percentiles
// of consistent data are numbers within the buckets of the smallest and
// largest value seen. They may fall as the percentage rises, as gRPC's
// do: a percentile that ends a bucket exactly is read halfway from that
// bucket's start to the next non-empty one's, below the interpolation
// within the bucket of a smaller percentile. The seeds are
// testdata/fuzz/FuzzHistogram (TestFuzzSeeds).
func FuzzHistogram(f *testing.F) {
	f.Fuzz(func(t *testing.T, resolution, maxPossible float64, values, raw []byte) {
		if resolution > 0 && maxPossible > 1 && math.Log(maxPossible)/math.Log1p(resolution) > 1<<16 {
			return // allowed, up to 10^8 buckets, but too slow to fuzz
		}
		params := &testpb.HistogramParams{Resolution: resolution, MaxPossible: maxPossible}
		h, err := NewHistogram(params)
		if err != nil {
			return
		}
		worker, err := NewHistogram(params)
		if err != nil {
			t.Fatalf("NewHistogram(%v) succeeded once only: %v", params, err)
		}
		var lo, hi float64 = math.Inf(1), math.Inf(-1)
		for ; len(values) >= 8; values = values[8:] {
			x := math.Float64frombits(binary.LittleEndian.Uint64(values))
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > maxPossible && maxPossible > 0 {
				continue
			}
			worker.Add(x)
			lo, hi = min(lo, x), max(hi, x)
		}
		if err := h.Merge(worker.Data()); err != nil {
			t.Fatalf("a worker's histogram of the same parameters does not merge: %v", err)
		}
		if h.Count() == 0 {
			return
		}
		floor, ceiling := min(lo, h.bucketStart(h.bucketFor(lo))), max(hi, h.bucketStart(h.bucketFor(hi)+1))
		for p := 0.0; p <= 100; p += 12.5 {
			if v := h.Percentile(p); math.IsNaN(v) || v < floor || v > ceiling {
				t.Fatalf("percentile %v of values from %v to %v is %v", p, lo, hi, v)
			}
		}

		data := &testpb.HistogramData{Bucket: make([]uint32, len(raw)/4)}
		for i := range data.Bucket {
			data.Bucket[i] = binary.LittleEndian.Uint32(raw[4*i:])
			data.Count += float64(data.Bucket[i])
		}
		data.MinSeen, data.MaxSeen = lo, hi
		if err := h.Merge(data); err == nil && len(data.Bucket) != len(h.buckets) {
			t.Fatalf("merged %d buckets into %d", len(data.Bucket), len(h.buckets))
		}
		data.Count++
		if err := h.Merge(data); err == nil {
			t.Fatalf("merged a histogram of %v values with %v in its buckets", data.Count, data.Count-1)
		}
	})
}
