package report

import (
	"math"
	"testing"
)

// The exact distribution of U counts every arrangement once, and its
// one-sided 5% points are the textbook's critical values.
func TestMannWhitneyLowerCount(t *testing.T) {
	for _, c := range []struct{ n, m, want int }{
		{2, 2, 0},    // P(U = 0) = 1/6: no bound
		{3, 3, 1},    // P(U = 0) = 1/20
		{6, 6, 8},    // P(U <= 7) = 0.047, P(U <= 8) = 0.066
		{12, 12, 43}, // critical U = 42, one-tailed 0.05
		{5, 8, 9},    // critical U = 8
	} {
		if got := mannWhitneyLowerCount(c.n, c.m, 0.05); got != c.want {
			t.Errorf("n=%d m=%d: c=%d, want %d", c.n, c.m, got, c.want)
		}
	}
	probs := uProbs(7, 5)
	total := 0.0
	for _, v := range probs {
		total += v
		if k := v * 792; math.Abs(k-math.Round(k)) > 1e-9 { // C(12, 5) arrangements
			t.Errorf("uProbs(7, 5): %g is not a count over 792", v)
		}
	}
	if math.Abs(total-1) > 1e-12 {
		t.Errorf("uProbs(7, 5) sums to %g, want 1", total)
	}
	// Past where C(n+m, n) overflows a float64, and an alpha with no bound.
	if c := mannWhitneyLowerCount(600, 1, 0.05); c != 30 {
		t.Errorf("n=600 m=1: c=%d, want 30", c)
	}
	if c := mannWhitneyLowerCount(3, 3, 1); c != 0 {
		t.Errorf("alpha 1: c=%d, want 0", c)
	}
}

// The ratio's bounds bracket the true ratio of two samples that differ by
// a known factor, and decide claims on either side of it.
func TestRatioInterval(t *testing.T) {
	base := []float64{100, 103, 97, 101, 99, 102, 98, 100, 104, 96, 101, 99}
	x := make([]float64, len(base))
	for i, v := range base {
		x[i] = 0.6 * v * (1 + 0.01*float64(i%3-1))
	}
	r, err := newRatioInterval(x, base, goalAlpha)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Estimate-0.6) > 0.01 || !(r.Lo < 0.6 && 0.6 < r.Hi) || r.Hi > 0.63 || r.Lo < 0.57 {
		t.Errorf("estimate %.3f, bounds %.3f to %.3f: want 0.6 inside, tight", r.Estimate, r.Lo, r.Hi)
	}
	for _, c := range []struct {
		bound float64
		upper bool
		want  Decision
	}{
		{0.7, true, Met}, {0.5, true, NotMet}, {0.6, true, NotDecided},
		{0.5, false, Met}, {0.7, false, NotMet}, {0.6, false, NotDecided},
	} {
		if got := r.decide(c.bound, c.upper); got != c.want {
			t.Errorf("bound %g upper=%v: %v, want %v", c.bound, c.upper, got, c.want)
		}
	}
	if _, err := newRatioInterval([]float64{1, 0}, base, goalAlpha); err == nil {
		t.Error("a zero figure gave a ratio")
	}
}

// The p-values of a claim agree with the bounds: "below b" has p at most
// alpha exactly when Hi < b, "above b" exactly when Lo > b.
func TestRatioIntervalPValuesAgreeWithBounds(t *testing.T) {
	base := []float64{100, 103, 97, 101, 99, 102}
	x := []float64{74, 76, 77, 78, 79, 80}
	r, err := newRatioInterval(x, base, goalAlpha)
	if err != nil {
		t.Fatal(err)
	}
	for b := 0.70; b < 0.85; b += 0.0025 {
		if got, want := r.pBelow(b) <= goalAlpha*(1+1e-9), r.Hi < b; got != want {
			t.Errorf("below %.4f: p=%.4f, Hi=%.4f", b, r.pBelow(b), r.Hi)
		}
		if got, want := r.pAbove(b) <= goalAlpha*(1+1e-9), r.Lo > b; got != want {
			t.Errorf("above %.4f: p=%.4f, Lo=%.4f", b, r.pAbove(b), r.Lo)
		}
	}
	if p := r.pAbove(0.5); math.Abs(p-1.0/924) > 1e-12 { // every pair above: the least U of C(12, 6)
		t.Errorf("pAbove(0.5) = %g, want 1/924", p)
	}
}
