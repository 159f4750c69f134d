package report

import (
	"math"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// The signed-rank distribution's one-sided 5% points are the textbook's
// critical values (T <= 2 at n = 6, T <= 10 at n = 10).
func TestSignedRankLowerCount(t *testing.T) {
	for _, c := range []struct{ n, want int }{{4, 0}, {5, 1}, {6, 3}, {10, 11}} {
		if got := lowerCount(signedRankProbs(c.n), 0.05); got != c.want {
			t.Errorf("n=%d: c=%d, want %d", c.n, got, c.want)
		}
	}
	total := 0.0
	for _, p := range signedRankProbs(7) {
		total += p
	}
	if math.Abs(total-1) > 1e-12 {
		t.Errorf("signedRankProbs(7) sums to %g", total)
	}
}

// drifting is six rounds of a machine whose speed drifts by ±25% from round
// to round; within a round, the configuration is 1.1 times the baseline.
var drifting = []float64{100, 80, 120, 90, 110, 75}

func timesRounds(f float64, rounds []float64) []float64 {
	out := make([]float64, len(rounds))
	for i, v := range rounds {
		out[i] = f * v * (1 + 0.004*float64(i%3-1))
	}
	return out
}

// Paired by round, the drift cancels: 1.1x is bounded tightly and meets
// "at least 1.05x"; unpaired, the same figures decide nothing.
func TestPairedRatioIntervalCancelsDrift(t *testing.T) {
	x := timesRounds(1.1, drifting)
	paired, err := newPairedRatioInterval(x, drifting, goalAlpha)
	if err != nil {
		t.Fatal(err)
	}
	unpaired, err := newRatioInterval(x, drifting, goalAlpha)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(paired.Estimate-1.1) > 0.01 || paired.Lo < 1.09 || paired.Hi > 1.11 {
		t.Errorf("paired: %.3f, %.3f to %.3f: want 1.1, tight", paired.Estimate, paired.Lo, paired.Hi)
	}
	if paired.decide(1.05, false) != Met || unpaired.decide(1.05, false) != NotDecided {
		t.Errorf("at least 1.05x: paired %v, unpaired %v; want met and not decided", paired.decide(1.05, false), unpaired.decide(1.05, false))
	}
	// The p-values agree with the bounds, as unpaired.
	for b := 1.0; b < 1.2; b += 0.001 {
		if (paired.pBelow(b) <= goalAlpha*(1+1e-9)) != (paired.Hi < b) || (paired.pAbove(b) <= goalAlpha*(1+1e-9)) != (paired.Lo > b) {
			t.Errorf("bound %.3f: p below %.4f (Hi %.4f), p above %.4f (Lo %.4f)", b, paired.pBelow(b), paired.Hi, paired.pAbove(b), paired.Lo)
		}
	}
	if _, err := newPairedRatioInterval(x, drifting[1:], goalAlpha); err == nil {
		t.Error("six and five repetitions paired")
	}
}

// A goal pairs two cells' repetitions only when one file says its servers
// took turns a round at a time.
func TestGoalPairsRepetitionsMeasuredInTurns(t *testing.T) {
	g := Goal{GroupBy: []string{"containers"}, Vary: []string{"method"}, Baseline: "list",
		Limits: []RatioLimit{{Metric: "latency_p50", Min: 1.05}}}
	turns := &schema.Environment{Extra: map[string]string{schema.ExtraRepsPaired: schema.PairedByRound}}
	cells := func(env *schema.Environment) (Row, Row) {
		b, x := goalRow("list", 0, drifting, around(1)), goalRow("stream", 0, timesRounds(1.1, drifting), around(1))
		b.Env, x.Env = env, env
		return b, x
	}
	b, x := cells(turns)
	wantAll(t, renderGoal(g, b, x), "1.10x (met; 95%: ≥ 1.10x, n=6 paired)", "**Goal met**")
	b, x = cells(&schema.Environment{})
	wantAll(t, renderGoal(g, b, x), "(not decided; 95% each:", "n=6+6)", "**Goal not decided**")
}
