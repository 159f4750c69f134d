package report

import (
	"fmt"
	"strings"
)

// summary is the closing line: the limits, the verdict, and the cells that
// miss or are not decided. A goal over N cells is met only when all N were
// judged and met: a cell left unjudged could be the one that misses, so
// with k of N judged the goal reads "not decided (k of N judged)".
func (s Goal) summary(rows []goalVerdict) string {
	goal := s.limitsText()
	overall, judged := Met, 0
	byDecision := map[Decision][]string{}
	for _, v := range rows {
		name := strings.TrimPrefix(v.group+": "+v.config, ": ")
		byDecision[v.decision] = append(byDecision[v.decision], name)
		if v.decision == NotJudged {
			continue
		}
		overall = overall.and(v.decision)
		if !v.unmeasured {
			judged++
		}
	}
	headline := "Goal " + overall.String()
	if judged < len(rows) && overall != NotMet {
		overall = NotDecided
		headline = fmt.Sprintf("Goal %s (%d of %d judged)", overall, judged, len(rows))
	}
	line := fmt.Sprintf("**%s** (%s)", headline, goal)
	unjudged := ""
	if names := byDecision[NotJudged]; len(names) > 0 {
		unjudged = fmt.Sprintf(" %d of %d cells not judged (the table says why): %s.",
			len(names), len(rows), strings.Join(names, "; "))
	}
	switch {
	case overall == Met && len(rows) == 1:
		return line + " by " + byDecision[Met][0] + "."
	case overall == Met:
		return fmt.Sprintf("%s in all %d cells.", line, len(rows))
	}
	var parts []string
	for _, d := range []Decision{NotMet, NotDecided} {
		if names := byDecision[d]; len(names) > 0 {
			parts = append(parts, fmt.Sprintf("%s in %d of %d cells: %s", d, len(names), len(rows), strings.Join(names, "; ")))
		}
	}
	if len(parts) == 0 {
		return line + "." + unjudged
	}
	return line + ": " + strings.Join(parts, "; ") + "." + unjudged
}

// notMeasured is the closing line of a goal whose suite was measured
// without the configurations it compares: not decided, since the cells it
// would judge are not there to miss it.
func (s Goal) notMeasured() string {
	config := "any configuration"
	if len(s.Config) > 0 {
		config = displayName(s.Names, s.Config[s.Vary[0]])
	}
	return fmt.Sprintf("**Goal %s (0 judged)** (%s): no cell of %s against %s was measured.",
		NotDecided, s.limitsText(), config, displayName(s.Names, s.Baseline))
}

// limitsText is the goal's limits as its closing line names them: "of
// Go's: req/s at least 1x, Latency p99 at most 1.5x".
func (s Goal) limitsText() string {
	limits := make([]string, len(s.Limits))
	for i, l := range s.Limits {
		limits[i] = l.String()
	}
	return "of " + displayName(s.Names, s.Baseline) + "'s: " + strings.Join(limits, ", ")
}
