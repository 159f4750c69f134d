package report

import (
	"fmt"
	"math"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// RatioLimit bounds one metric of a configuration relative to the
// baseline's: at most Max times it, or at least Min times it (0: no bound).
type RatioLimit struct {
	Metric   string
	Max, Min float64
}

func (l RatioLimit) String() string {
	bound := ""
	switch {
	case l.Max > 0 && l.Min > 0:
		bound = fmt.Sprintf("between %gx and %gx", l.Min, l.Max)
	case l.Max > 0:
		bound = fmt.Sprintf("at most %gx", l.Max)
	case l.Min > 0:
		bound = fmt.Sprintf("at least %gx", l.Min)
	}
	return MetricLabel(l.Metric) + " " + bound
}

// limitVerdict is one limit's verdict on one cell, and what the table shows
// of it.
type limitVerdict struct {
	decision Decision
	why      string // what kept the limit from a verdict, if anything
	// tested: pNotMet is the one-sided p-value of "not met", which Holm's
	// correction over the goal's limits and cells (goal_holm.go) reads; a
	// failed run is not met for certain (0).
	tested  bool
	pNotMet float64
	// text renders the ratio's cell for a decision; nil shows no ratio.
	text func(Decision) string
	// measured is the verdict of the figures alone, which the ratio's cell
	// shows when the limit is not judged.
	measured Decision
}

func (l limitVerdict) cell() string {
	switch {
	case l.text == nil:
		return missing
	case l.decision == NotJudged:
		return l.text(l.measured)
	}
	return l.text(l.decision)
}

// decide judges the limit on the repetitions of a configuration (x) and of
// the baseline by the ratio's confidence bounds (ratioInterval; paired by
// round when they were measured in turns, paired_interval.go), widened by
// the headroom the two sides had left (goal_headroom.go).
func (l RatioLimit) decide(x, base schema.Metric, room headroom, paired bool) limitVerdict {
	interval := newRatioInterval
	if paired {
		interval = newPairedRatioInterval
	}
	r, err := interval(x.Reps, base.Reps, goalAlpha)
	if err != nil {
		ratio := x.Median / base.Median
		return limitVerdict{decision: NotDecided, text: func(Decision) string {
			return fmt.Sprintf("%.2fx (not decided: %v)", ratio, err)
		}}
	}
	c := room.widen(r)
	v := limitVerdict{decision: Met, tested: r.Bounded, pNotMet: 1}
	if l.Max > 0 {
		v.decision = v.decision.and(c.decide(l.Max, true))
		// Not met: the ratio's capacity is above Max, Lo x base > Max.
		v.pNotMet = min(v.pNotMet, r.pAbove(l.Max/room.base()))
	}
	if l.Min > 0 {
		v.decision = v.decision.and(c.decide(l.Min, false))
		// Not met: Hi / x < Min.
		v.pNotMet = min(v.pNotMet, r.pBelow(l.Min*room.x()))
	}
	if l.Max > 0 && l.Min > 0 {
		// Two claims, either of which may miss.
		v.pNotMet = min(2*v.pNotMet, 1)
	}
	if !r.Bounded {
		v.pNotMet = math.NaN()
	}
	v.measured = v.decision
	v.text = func(d Decision) string {
		return fmt.Sprintf("%.2fx (%s; %s%s)", r.Estimate, d, c.bounds(d, l.Max > 0, l.Min > 0), room.note())
	}
	return v
}
