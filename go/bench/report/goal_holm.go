package report

import (
	"cmp"
	"fmt"
	"slices"
)

// holm corrects the goal's "not met" verdicts for their number. Each
// limit of each cell is tested at goalAlpha on its own; with a dozen
// cells, one of them would seem not met by chance far more often than one
// time in twenty. So "not met" must survive Holm's step-down procedure
// over every tested limit of every cell: sorted by p-value, the i-th
// smallest of m (from 0) is rejected while each so far is at most
// goalAlpha/(m-i). That bounds the chance of calling the goal not met
// when every cell meets it at goalAlpha. A limit not met alone that
// does not survive is not decided. ("Met" needs no correction: the goal
// is met only when every cell is, each at goalAlpha.)
func holm(rows []goalVerdict) {
	type test struct {
		row, limit int
		p          float64
	}
	var tests []test
	for i, v := range rows {
		for j, l := range v.limits {
			if l.tested && (l.decision == Met || l.decision == NotMet || l.decision == NotDecided) {
				tests = append(tests, test{i, j, l.pNotMet})
			}
		}
	}
	slices.SortStableFunc(tests, func(a, b test) int { return cmp.Compare(a.p, b.p) })
	m := len(tests)
	rejected := 0
	for i, t := range tests {
		// The tolerance of mannWhitneyLowerCount: a p-value of exactly
		// alpha is a bound at alpha.
		if t.p > goalAlpha/float64(m-i)*(1+1e-9) {
			break
		}
		rejected++
	}
	for _, t := range tests[rejected:] {
		l := &rows[t.row].limits[t.limit]
		if l.decision == NotMet {
			l.decision = NotDecided
			l.why = fmt.Sprintf("not met alone (p=%.3f), not after Holm's correction over %d tests", t.p, m)
		}
	}
}
