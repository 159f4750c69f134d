package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// compareConfidence is the confidence level of the ± ranges, and
// compareThresholds the significance level of the test; both are
// benchstat's defaults so the two tools agree on the same data.
var (
	compareConfidence = 0.95
	compareThresholds = benchmath.DefaultThresholds // alpha 0.05
)

// MetricChange is one metric of one scenario measured in both runs.
type MetricChange struct {
	Suite, Scenario, Metric, Unit string
	Better                        schema.Better
	// Old and New summarise the repetitions: the median and its confidence
	// interval, assuming nothing about their distribution.
	Old, New benchmath.Summary
	// Test is the Mann-Whitney U test of the two samples.
	Test benchmath.Comparison
	// Primary marks the metrics the regression gate judges (see
	// IsPrimaryMetric), and Gated those of them whose change is
	// significant after the Benjamini-Hochberg correction across every
	// primary metric of the comparison.
	Primary, Gated bool
}

// Significant reports whether the test rejects "no change" at alpha.
func (c MetricChange) Significant() bool { return c.Test.P <= c.Test.Alpha }

// Delta is benchstat's rendering: "~" when not significant, else the
// relative change of the medians ("+3.12%").
func (c MetricChange) Delta() string { return c.Test.FormatDelta(c.Old.Center, c.New.Center) }

// hostMetrics describe the machine a run had, not the code measured: a
// change in them is shown, but is neither better nor worse.
var hostMetrics = map[string]bool{
	schema.MetricCPUPressure: true,
	schema.MetricCPUSteal:    true,
	// The server's cgroup: how much a CPU quota held it back, and how
	// long its threads waited for a CPU.
	schema.MetricServerThrottled:   true,
	schema.MetricServerCPUPressure: true,
	// How busy each side was: a change is worth seeing, neither good nor bad.
	schema.MetricClientUtilisation: true,
	schema.MetricServerUtilisation: true,
}

// Verdict says whether a significant change is an improvement, by the
// metric's better direction; "" when not significant, "host" for a
// significant change of the host (see hostMetrics).
func (c MetricChange) Verdict() string {
	if !c.Significant() || c.Old.Center == c.New.Center {
		return ""
	}
	if hostMetrics[c.Metric] {
		return "host"
	}
	if improved(c.New.Center-c.Old.Center, c.Better) {
		return "better"
	}
	return "worse"
}

// WorsePercent is how much worse the new median is than the old, in
// percent of the old, by the metric's better direction: 0 when it is not
// worse, or when the old median is 0 (no scale to measure against).
func (c MetricChange) WorsePercent() float64 {
	if c.Old.Center == 0 {
		return 0
	}
	change := (c.New.Center - c.Old.Center) / c.Old.Center * 100
	if c.Better == schema.HigherIsBetter {
		change = -change
	}
	return max(change, 0)
}

// Regressions returns the primary metrics that are worse, significantly
// after correction for the number of them tested, and by more than
// thresholdPct percent of the old median: the cells a regression check
// fails on. A significant change within the threshold is noise the check
// tolerates; an insignificant one is never a regression, however large,
// since the repetitions cannot tell it from chance. With 6 repetitions a
// side, one cell alone can never pass the correction when a few dozen are
// tested; a change across many cells can. To judge one cell, measure more
// repetitions of fewer scenarios.
func (c *Comparison) Regressions(thresholdPct float64) []MetricChange {
	var worse []MetricChange
	for _, ch := range c.Changes {
		if ch.Gated && ch.Verdict() == "worse" && ch.WorsePercent() > thresholdPct {
			worse = append(worse, ch)
		}
	}
	return worse
}

// gate marks the primary metrics and, among them, those whose change
// survives the Benjamini-Hochberg procedure at the test's alpha: sorted by
// p-value, the k-th smallest of m is significant if some p(j) <= j/m x
// alpha for j >= k. It controls the expected share of false alarms among
// the changes it reports, and so, when nothing changed, the chance of any.
func (c *Comparison) gate() {
	var primary []int
	for i := range c.Changes {
		ch := &c.Changes[i]
		ch.Primary = IsPrimaryMetric(ch.Suite, ch.Metric) && !hostMetrics[ch.Metric]
		if ch.Primary {
			primary = append(primary, i)
		}
	}
	slices.SortStableFunc(primary, func(a, b int) int { return cmp.Compare(c.Changes[a].Test.P, c.Changes[b].Test.P) })
	m := float64(len(primary))
	last := -1 // the largest rank k whose p-value is within its bound
	for k, i := range primary {
		t := c.Changes[i].Test
		if t.P <= float64(k+1)/m*t.Alpha {
			last = k
		}
	}
	for k := 0; k <= last; k++ {
		c.Changes[primary[k]].Gated = true
	}
}

// Comparison is the result of Compare.
type Comparison struct {
	Changes []MetricChange
	// Notes are what the numbers cannot say: scenarios in one run only,
	// failed scenarios, differing environments, too few repetitions.
	Notes []string
}

// Compare tests every metric present in both runs for a significant
// change, as benchstat does: medians with 95% confidence intervals, and a
// Mann-Whitney U test at alpha 0.05 on the repetitions. It refuses, with a
// *CompareRefusal, results it cannot judge: those of different hosts, or
// of separate runs (build actions) on one host.
func Compare(old, new []*schema.File) (*Comparison, error) {
	oldSets, err := datasets(old)
	if err != nil {
		return nil, fmt.Errorf("old: %w", err)
	}
	newSets, err := datasets(new)
	if err != nil {
		return nil, fmt.Errorf("new: %w", err)
	}
	cmp := &Comparison{}
	warned := map[string]bool{}
	note := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		if !warned[s] {
			warned[s] = true
			cmp.Notes = append(cmp.Notes, s)
		}
	}
	oldBySuite := map[string]*Dataset{}
	for _, d := range oldSets {
		oldBySuite[d.Suite] = d
	}
	for _, nd := range newSets {
		if od := oldBySuite[nd.Suite]; od != nil {
			if r := refuseComparison(nd.Suite, od.Measurements, nd.Measurements); r != nil {
				return nil, r
			}
		}
	}
	for _, nd := range newSets {
		od := oldBySuite[nd.Suite]
		delete(oldBySuite, nd.Suite)
		if od == nil {
			note("suite %s: only in the new results", nd.Suite)
			continue
		}
		for _, diff := range environmentDiffs(od.Environments[0], nd.Environments[0]) {
			note("suite %s: environments differ: %s", nd.Suite, diff)
		}
		oldRows := map[string]Row{}
		for _, r := range od.Rows {
			oldRows[r.Scenario] = r
		}
		for _, nr := range nd.Rows {
			or, ok := oldRows[nr.Scenario]
			delete(oldRows, nr.Scenario)
			switch {
			case !ok:
				note("%s/%s: only in the new results", nd.Suite, nr.Scenario)
				continue
			case or.Status != schema.StatusOK || nr.Status != schema.StatusOK:
				note("%s/%s: failed in the %s results", nd.Suite, nr.Scenario, failedSide(or, nr))
				continue
			}
			for _, nm := range nr.Metrics {
				om, ok := or.Metric(nm.Name)
				if !ok {
					continue
				}
				c := compareMetric(om, nm)
				c.Suite, c.Scenario = nd.Suite, nr.Scenario
				for _, w := range slices.Concat(c.Old.Warnings, c.New.Warnings, c.Test.Warnings) {
					note("%s", w)
				}
				cmp.Changes = append(cmp.Changes, c)
			}
		}
		for _, r := range od.Rows {
			if _, gone := oldRows[r.Scenario]; gone {
				note("%s/%s: only in the old results", nd.Suite, r.Scenario)
			}
		}
	}
	for _, d := range oldSets {
		if _, gone := oldBySuite[d.Suite]; gone {
			note("suite %s: only in the old results", d.Suite)
		}
	}
	cmp.gate()
	return cmp, nil
}

func compareMetric(om, nm schema.Metric) MetricChange {
	// NewSample sorts its argument: give it copies, not the files' data.
	oldSample := benchmath.NewSample(slices.Clone(om.Reps), &compareThresholds)
	newSample := benchmath.NewSample(slices.Clone(nm.Reps), &compareThresholds)
	return MetricChange{
		Metric: nm.Name, Unit: nm.Unit, Better: nm.Better,
		Old:  benchmath.AssumeNothing.Summary(oldSample, compareConfidence),
		New:  benchmath.AssumeNothing.Summary(newSample, compareConfidence),
		Test: benchmath.AssumeNothing.Compare(oldSample, newSample),
	}
}

func failedSide(or, nr Row) string {
	switch {
	case or.Status != schema.StatusOK && nr.Status != schema.StatusOK:
		return "old and new"
	case or.Status != schema.StatusOK:
		return "old"
	}
	return "new"
}

func environmentDiffs(a, b schema.Environment) []string {
	var diffs []string
	for _, f := range []struct{ name, a, b string }{
		{"cpu_model", a.CPUModel, b.CPUModel},
		{"cpu_count", fmt.Sprint(a.CPUCount), fmt.Sprint(b.CPUCount)},
		{"gomaxprocs", fmt.Sprint(a.GOMAXPROCS), fmt.Sprint(b.GOMAXPROCS)},
		{"kernel", a.Kernel, b.Kernel},
		{"go_version", a.GoVersion, b.GoVersion},
		{"sbcl_version", a.SBCLVersion, b.SBCLVersion},
		{"platform", a.Platform, b.Platform},
		{"build_config", a.BuildConfig, b.BuildConfig},
		{"host", a.Host, b.Host},
	} {
		if f.a != f.b {
			diffs = append(diffs, fmt.Sprintf("%s %q vs %q", f.name, f.a, f.b))
		}
	}
	return diffs
}

// Markdown renders the comparison as one table per suite, benchstat's
// columns with units and a verdict.
func (c *Comparison) Markdown() string {
	var b strings.Builder
	b.WriteString("# Comparison: old vs new\n\n")
	var suite string
	var t Table
	flush := func() {
		if len(t.Rows) > 0 {
			b.WriteString("## " + suite + "\n\n" + t.Markdown() + "\n")
		}
	}
	for _, ch := range c.Changes {
		if ch.Suite != suite {
			flush()
			suite = ch.Suite
			t = Table{Header: []string{"Scenario", "Metric", "Old", "New", "Delta", "Test"}}
		}
		delta := ch.Delta()
		if v := ch.Verdict(); v != "" {
			delta += " (" + v + ")"
			if v == "better" {
				delta = "**" + delta + "**"
			}
		}
		metric := MetricLabel(ch.Metric)
		if ch.Primary {
			metric += " ‡"
			if ch.Gated {
				delta += " ‡"
			}
		}
		t.Rows = append(t.Rows, []string{
			ch.Scenario, metric,
			summaryText(ch.Old, ch.Unit), summaryText(ch.New, ch.Unit),
			delta, ch.Test.String(),
		})
	}
	flush()
	if len(c.Changes) == 0 {
		b.WriteString("No metric was measured in both runs.\n\n")
	}
	b.WriteString("Old and New are medians ± the 95% confidence interval. Delta is \"~\" unless a Mann-Whitney U test finds the difference significant at α = 0.05.\n")
	primary, gated := 0, 0
	for _, ch := range c.Changes {
		if ch.Primary {
			primary++
		}
		if ch.Gated {
			gated++
		}
	}
	fmt.Fprintf(&b, "\nThe regression gate judges only the metrics marked ‡, each suite's primary ones (%d here), "+
		"and a change only if it stays significant after the Benjamini-Hochberg correction across all of them "+
		"at α = 0.05: %d did (their Delta is marked ‡).\n", primary, gated)
	if len(c.Notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range c.Notes {
			b.WriteString("- " + n + "\n")
		}
	}
	return b.String()
}

func summaryText(s benchmath.Summary, unit string) string {
	return FormatValue(s.Center, unit) + " ± " + s.PctRangeString()
}
