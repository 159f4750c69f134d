package report

import (
	"fmt"
	"math"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// tableRatio is the ratio a table shows between two cells, x over base, and
// the note of its test: the estimate a goal judges (Hodges-Lehmann, paired
// by round where the cells were measured in turns a round at a time), so
// that a table and a goal never give two ratios for one pair of cells. The
// test of "no difference" goes with the estimate: Wilcoxon's signed-rank
// test of the rounds' ratios when paired, "(p=0.031 n=6 paired)", and
// Mann-Whitney's U of the repetitions otherwise, as benchstat prints it.
// Figures that are not all positive (a count of errors) have no ratio on a
// log scale: the ratio of the medians stands in, and none (NaN) when the
// base's median is zero.
func tableRatio(x, base schema.Metric, paired bool) (float64, string) {
	if paired {
		if r, err := newPairedRatioInterval(x.Reps, base.Reps, goalAlpha); err == nil {
			return r.Estimate, pairedNote(r)
		}
	}
	note := significanceNote(mannWhitney(x.Reps, base.Reps))
	if r, err := newRatioInterval(x.Reps, base.Reps, goalAlpha); err == nil {
		return r.Estimate, note
	}
	if base.Median == 0 {
		return math.NaN(), note
	}
	return x.Median / base.Median, note
}

// pairedNote is significanceNote for a paired ratio: the two-sided p-value
// of the signed-rank test that the ratio is 1.
func pairedNote(r ratioInterval) string {
	p := min(1, 2*min(r.pBelow(1), r.pAbove(1)))
	note := fmt.Sprintf("(p=%0.3f n=%d paired)", p, r.N)
	if math.IsNaN(p) || p > compareThresholds.CompareAlpha {
		note = "~ " + note
	}
	return note
}
