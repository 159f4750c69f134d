package report

import (
	"slices"

	"golang.org/x/perf/benchmath"
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
