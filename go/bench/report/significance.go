package report

import (
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// mannWhitney tests whether two sets of repetitions differ, as benchstat
// does: the Mann-Whitney U test at alpha 0.05. With fewer than 4
// repetitions on a side no difference can reach that level, so such cells
// never count as significant.
func mannWhitney(a, b []float64) benchmath.Comparison {
	// NewSample sorts its argument: give it copies, not the files' data.
	return benchmath.AssumeNothing.Compare(
		benchmath.NewSample(slices.Clone(a), &compareThresholds),
		benchmath.NewSample(slices.Clone(b), &compareThresholds))
}

// significant reports whether the test rejects "no difference".
func significant(c benchmath.Comparison) bool { return c.P <= c.Alpha }

// significanceNote is what a ratio cell carries after the ratio: the test's
// p-value and repetitions as benchstat prints them, preceded by its "~" when
// the difference is not significant: "(p=0.002 n=6)" or "~ (p=0.394 n=6)".
func significanceNote(c benchmath.Comparison) string {
	note := "(" + c.String() + ")"
	if !significant(c) {
		note = "~ " + note
	}
	return note
}

// scaled returns the repetitions multiplied by f: the baseline moved to a
// goal's bound, so that "x is at most 0.7 times the baseline" becomes a test
// of x against 0.7 times the baseline's repetitions.
func scaled(reps []float64, f float64) []float64 {
	out := make([]float64, len(reps))
	for i, v := range reps {
		out[i] = v * f
	}
	return out
}

// Decision is a goal's verdict on one limit, cell or goal.
type Decision int

const (
	// NotDecided: the repetitions cannot tell which side of the bound the
	// figure lies on at alpha 0.05 (too few, or too close to the bound).
	NotDecided Decision = iota
	Met
	NotMet
	// NotJudged: the cell's figures were set by something other than what
	// the goal is about (a saturated load generator, a server never
	// pushed), so they are shown and not judged.
	NotJudged
)

func (d Decision) String() string {
	switch d {
	case Met:
		return "met"
	case NotMet:
		return "not met"
	case NotJudged:
		return "not judged"
	}
	return "not decided"
}

// and combines verdicts on the limits of one cell, or on the cells of one
// goal: not met when any is not met, met when all are met, else not decided.
func (d Decision) and(e Decision) Decision {
	switch {
	case d == NotMet || e == NotMet:
		return NotMet
	case d == Met && e == Met:
		return Met
	}
	return NotDecided
}

// decideBound judges "x is at most (upper) or at least (!upper) bound times
// base" on the repetitions: it tests x against base scaled to the bound, and
// decides only when the test finds them different, by which side of the
// scaled median x's median lies on.
func decideBound(x, base schema.Metric, bound float64, upper bool) (Decision, benchmath.Comparison) {
	c := mannWhitney(scaled(base.Reps, bound), x.Reps)
	if !significant(c) {
		return NotDecided, c
	}
	if below := x.Median < bound*base.Median; below == upper {
		return Met, c
	}
	return NotMet, c
}
