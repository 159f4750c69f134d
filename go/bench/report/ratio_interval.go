package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// A goal's verdict rests on the ratio of a configuration's figure to its
// baseline's, so that ratio is what gets a confidence interval: the
// Hodges-Lehmann estimate of the shift between the two sets of repetitions
// on a log scale, with its exact distribution-free bounds (the order
// statistics of all pairwise log ratios that the Mann-Whitney U
// distribution picks). A claim "at most b times" is met when the ratio's
// upper one-sided bound is below b, not met when its lower bound is above
// b, and not decided otherwise; "at least b times" mirrors it. Each bound
// is one-sided at goalAlpha, as each claim is.
const goalAlpha = 0.05

// ratioInterval is the estimate of x/base and its one-sided (1-alpha)
// confidence bounds: the ratio is at least Lo, and (separately) at most Hi.
type ratioInterval struct {
	Estimate float64
	Lo, Hi   float64
	N, M     int  // repetitions of x and of base
	Bounded  bool // false: too few repetitions for any bound at alpha
	// Paired: the repetitions were paired by round (paired_interval.go),
	// and the candidates are the Walsh averages of the rounds' log ratios.
	Paired bool
	// logRatios are the candidate log ratios, sorted: the N*M pairwise log
	// ratios, or the Walsh averages when paired. The estimate is their
	// median, the bounds two of them, and the p-values of a claim (pBelow,
	// pAbove) count them.
	logRatios []float64
	// cdf is P(S <= k) for the rank statistic S that counts candidates
	// above the true log ratio: Mann-Whitney's U, or the signed-rank T+.
	cdf func(k int) float64
}

// newRatioInterval estimates x/base from positive repetitions. It returns
// an error when a figure is not positive (a ratio of them means nothing).
func newRatioInterval(x, base []float64, alpha float64) (ratioInterval, error) {
	n, m := len(x), len(base)
	if n == 0 || m == 0 {
		return ratioInterval{}, fmt.Errorf("no repetitions")
	}
	diffs := make([]float64, 0, n*m)
	for _, a := range x {
		for _, b := range base {
			if a <= 0 || b <= 0 {
				return ratioInterval{}, fmt.Errorf("a figure is not positive")
			}
			diffs = append(diffs, math.Log(a)-math.Log(b))
		}
	}
	slices.Sort(diffs)
	r := ratioInterval{Estimate: math.Exp(schema.Median(diffs)), N: n, M: m, Lo: 0, Hi: math.Inf(1), logRatios: diffs,
		cdf: func(k int) float64 { return cumulative(uProbs(n, m), k) }}
	if c := mannWhitneyLowerCount(n, m, alpha); c > 0 {
		r.Bounded = true
		r.Lo = math.Exp(diffs[c-1])
		r.Hi = math.Exp(diffs[len(diffs)-c])
	}
	return r, nil
}

// mannWhitneyLowerCount is the largest c with P(U <= c-1) <= alpha, where
// U is the Mann-Whitney count of pairs (x_i > y_j) for samples of n and m
// with no difference between them: the c-th smallest pairwise difference
// is then a lower (1-alpha) confidence bound of the shift, and the c-th
// largest an upper one. 0 means no bound exists at alpha (too few
// repetitions: with 3 and 3, even P(U = 0) is 1/20), or alpha is not below
// one half. Results are kept: the distribution costs O(n²m²).
func mannWhitneyLowerCount(n, m int, alpha float64) int {
	if alpha <= 0 || alpha >= 0.5 {
		return 0
	}
	key := lowerCountKey{n, m, alpha}
	if c, ok := lowerCounts.Load(key); ok {
		return c.(int)
	}
	c := lowerCount(uProbs(n, m), alpha)
	lowerCounts.Store(key, c)
	return c
}

type lowerCountKey struct {
	n, m  int
	alpha float64
}

var lowerCounts sync.Map // lowerCountKey -> int

// uProbs is, for each u in 0..n*m, the probability that u of the n*m pairs
// have the x above the y when the C(n+m, n) arrangements of n x's and m
// y's are equally likely: the recurrence
// p(n, m, u) = n/(n+m) p(n-1, m, u-m) + m/(n+m) p(n, m-1, u), by whether the
// largest value is an x (above all m y's) or a y. Kept as probabilities, not
// counts, it cannot overflow (C(n+m, n) does past n = m = 517).
func uProbs(n, m int) []float64 {
	// prev[j] holds p(i-1, j, .), cur[j] builds p(i, j, .).
	prev := make([][]float64, m+1)
	for j := range prev {
		prev[j] = []float64{1} // p(0, j, 0) = 1
	}
	for i := 1; i <= n; i++ {
		cur := make([][]float64, m+1)
		cur[0] = []float64{1} // p(i, 0, 0) = 1
		for j := 1; j <= m; j++ {
			f := make([]float64, i*j+1)
			px := float64(i) / float64(i+j)
			for u, c := range prev[j] { // the largest is an x: u-j pairs below it come from p(i-1, j)
				f[u+j] += px * c
			}
			for u, c := range cur[j-1] { // the largest is a y
				f[u] += (1 - px) * c
			}
			cur[j] = f
		}
		prev = cur
	}
	return prev[m]
}

// bounds prints the bound a verdict rests on: for a claim of one side
// ("at most", upper, or "at least"), the bound on that side when it is met
// and the other when it is not; both otherwise, for a verdict not decided or
// a claim with two sides.
func (r ratioInterval) bounds(d Decision, upper, lower bool) string {
	reps := fmt.Sprintf("%d+%d", r.N, r.M)
	if r.Paired {
		reps = fmt.Sprintf("%d paired", r.N)
	}
	if !r.Bounded {
		return fmt.Sprintf("no bound at %s reps", reps)
	}
	conf := fmt.Sprintf("%g%%", 100*(1-goalAlpha))
	n := "n=" + reps
	if upper != lower && d != NotDecided {
		// "At most" is met by the upper bound and missed by the lower one;
		// "at least" the other way round.
		if (d == Met) == upper {
			return fmt.Sprintf("%s: ≤ %.2fx, %s", conf, r.Hi, n)
		}
		return fmt.Sprintf("%s: ≥ %.2fx, %s", conf, r.Lo, n)
	}
	return fmt.Sprintf("%s each: ≥ %.2fx and ≤ %.2fx, %s", conf, r.Lo, r.Hi, n)
}

// decide judges "the ratio is at most (upper) or at least (!upper) bound".
func (r ratioInterval) decide(bound float64, upper bool) Decision {
	switch {
	case !r.Bounded:
		return NotDecided
	case upper && r.Hi < bound, !upper && r.Lo > bound:
		return Met
	case upper && r.Lo > bound, !upper && r.Hi < bound:
		return NotMet
	}
	return NotDecided
}

// pBelow is the one-sided p-value of "the ratio is below bound": the
// probability, were the ratio bound, of as few candidate ratios at or above
// it as were seen. It is at most alpha exactly when Hi < bound at alpha,
// so a verdict that rests on Hi has this p-value, and a correction for
// several verdicts (goal_holm.go) can be applied to it.
func (r ratioInterval) pBelow(bound float64) float64 {
	k := len(r.logRatios) - sort.SearchFloat64s(r.logRatios, math.Log(bound))
	return r.cdf(k)
}

// pAbove is the p-value of "the ratio is above bound", as pBelow mirrored:
// at most alpha exactly when Lo > bound at alpha.
func (r ratioInterval) pAbove(bound float64) float64 {
	lb := math.Log(bound)
	k := sort.Search(len(r.logRatios), func(i int) bool { return r.logRatios[i] > lb })
	return r.cdf(k)
}

// cumulative is P(S <= k) from the probabilities of S = 0, 1, ...
func cumulative(probs []float64, k int) float64 {
	p := 0.0
	for s, q := range probs {
		if s > k {
			break
		}
		p += q
	}
	return min(p, 1)
}

// lowerCount is the largest c with P(S <= c-1) <= alpha, from the
// probabilities of S = 0, 1, ...: the c-th smallest candidate is then a
// lower (1-alpha) confidence bound, and the c-th largest an upper one. 0:
// no bound at alpha.
func lowerCount(probs []float64, alpha float64) int {
	if alpha <= 0 || alpha >= 0.5 {
		return 0
	}
	cum := 0.0
	for s, p := range probs {
		cum += p
		// A tolerance for rounding: P(U = 0) at 3+3 is 1/20 exactly.
		if cum > alpha*(1+1e-9) {
			return s
		}
	}
	return 0
}
