package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Results measured in turns pair their repetitions by round: round i ran
// every contestant once, back to back, so the machine's drift over a run
// (a co-tenant, the heap, a warming room) is shared by the i-th repetition
// of each, and the ratio of the two within a round is free of it. The
// paired estimate of x/base is the Hodges-Lehmann estimate of one sample,
// the rounds' log ratios: the median of their Walsh averages (every mean
// of two of them, each with itself included), with the exact bounds of the
// Wilcoxon signed-rank test. Unpaired, the drift between rounds is noise
// that widens the bounds; paired, it cancels.

// newPairedRatioInterval estimates x/base from repetitions paired by index.
func newPairedRatioInterval(x, base []float64, alpha float64) (ratioInterval, error) {
	n := len(x)
	if n == 0 || n != len(base) {
		return ratioInterval{}, fmt.Errorf("%d and %d repetitions do not pair", len(x), len(base))
	}
	d := make([]float64, n)
	for i := range x {
		if x[i] <= 0 || base[i] <= 0 {
			return ratioInterval{}, fmt.Errorf("a figure is not positive")
		}
		d[i] = math.Log(x[i]) - math.Log(base[i])
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range d {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	slices.Sort(walsh)
	probs := signedRankProbs(n)
	r := ratioInterval{Estimate: math.Exp(schema.Median(walsh)), N: n, M: n, Paired: true, Lo: 0, Hi: math.Inf(1),
		logRatios: walsh, cdf: func(k int) float64 { return cumulative(probs, k) }}
	if c := lowerCount(probs, alpha); c > 0 {
		r.Bounded = true
		r.Lo = math.Exp(walsh[c-1])
		r.Hi = math.Exp(walsh[len(walsh)-c])
	}
	return r, nil
}

// signedRankProbs is, for each t in 0..n(n+1)/2, the probability that the
// ranks 1..n given a positive sign sum to t when each sign is a fair coin:
// the null distribution of the Wilcoxon signed-rank statistic T+ (which
// also counts the Walsh averages above the true shift).
func signedRankProbs(n int) []float64 {
	probs := []float64{1}
	for rank := 1; rank <= n; rank++ {
		next := make([]float64, len(probs)+rank)
		for t, p := range probs {
			next[t] += p / 2      // rank rank negative
			next[t+rank] += p / 2 // positive
		}
		probs = next
	}
	return probs
}
