package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// BoundGoal judges figures against absolute limits, cell by cell, with no
// baseline: "in the long-poll mix no cheap call fails and their p99 stays
// under 10 ms". Every cell that Where selects must meet every bound.
type BoundGoal struct {
	Title     string
	Statement string            // the goal in words, printed above the table
	Point     string            // its operating point, as Goal's
	Where     map[string]string // only scenarios with these parameters count
	Label     []string          // the parameters that name a cell in the table
	Names     map[string]string // display names of their values
	Bounds    []Bound
	Context   []MetricView // shown as measured (medians)
	Totals    []string     // metrics shown as the sum of the repetitions (counts)
}

// Bound is an absolute limit: a metric below Below. With Total, the sum of
// the repetitions must be below it (a count, such as failures, that must
// stay 0: Below 1); else every repetition must be below it for "met", and
// a median at or above it is "not met" (in between: not decided).
type Bound struct {
	Metric string
	Below  float64
	Total  bool
}

func (b Bound) label(unit string) string {
	if b.Total {
		return fmt.Sprintf("%s, all repetitions (< %s)", MetricLabel(b.Metric), FormatMetric(b.Metric, b.Below, unit))
	}
	return fmt.Sprintf("%s (< %s)", MetricLabel(b.Metric), FormatMetric(b.Metric, b.Below, unit))
}

// decide judges one cell's metric, and returns the table's cell: the sum,
// or the median and the largest repetition.
func (b Bound) decide(m schema.Metric) (Decision, string) {
	if b.Total {
		sum := repsTotal(m)
		d := Met
		if sum >= b.Below {
			d = NotMet
		}
		return d, FormatMetric(m.Name, sum, m.Unit)
	}
	d := NotDecided
	switch {
	case slices.Max(m.Reps) < b.Below:
		d = Met
	case m.Median >= b.Below:
		d = NotMet
	}
	return d, fmt.Sprintf("%s (max %s)", FormatMetric(m.Name, m.Median, m.Unit), FormatMetric(m.Name, m.Max, m.Unit))
}

func (s BoundGoal) Render(d *Dataset, p *Page) {
	data := d.Matching(s.Where, nil)
	if len(data.Rows) == 0 || len(s.Bounds) == 0 {
		return
	}
	t := Table{Header: []string{"Cell"}}
	units := make([]string, len(s.Bounds))
	for i, b := range s.Bounds {
		units[i], _, _ = data.metricInfo(b.Metric)
		t.Header = append(t.Header, b.label(units[i]))
	}
	for _, mv := range s.Context {
		t.Header = append(t.Header, mv.label())
	}
	for _, name := range s.Totals {
		t.Header = append(t.Header, MetricLabel(name)+", all repetitions")
	}
	t.Header = append(t.Header, "Goal")
	overall := Met
	byDecision := map[Decision][]string{}
	for _, r := range data.Rows {
		name := s.cellName(r)
		row, decision := s.judge(r)
		t.Rows = append(t.Rows, append([]string{name}, row...))
		byDecision[decision] = append(byDecision[decision], name)
		overall = overall.and(decision)
	}
	titled(p, s.Title)
	statement(p, s.Statement, s.Point)
	p.Table(t)
	line := fmt.Sprintf("**Goal %s**", overall)
	switch {
	case overall == Met:
		line += fmt.Sprintf(" in all %d cells.", len(data.Rows))
	default:
		var parts []string
		for _, dec := range []Decision{NotMet, NotDecided} {
			if names := byDecision[dec]; len(names) > 0 {
				parts = append(parts, fmt.Sprintf("%s in %d of %d cells: %s", dec, len(names), len(data.Rows), strings.Join(names, "; ")))
			}
		}
		line += ": " + strings.Join(parts, "; ") + "."
	}
	p.Text(line)
}

// judge is a cell's row after its name, and its verdict: a failed cell, or
// one without a bound's figure, does not meet the goal.
func (s BoundGoal) judge(r Row) ([]string, Decision) {
	var cells []string
	decision := Met
	for _, b := range s.Bounds {
		m, ok := r.Metric(b.Metric)
		if r.Status != schema.StatusOK || !ok {
			cells = append(cells, missing)
			decision = decision.and(NotMet)
			continue
		}
		d, cell := b.decide(m)
		cells = append(cells, cell)
		decision = decision.and(d)
	}
	for _, mv := range s.Context {
		cell := missing
		if m, ok := r.Metric(mv.Name); ok {
			cell = FormatMetric(mv.Name, m.Median, m.Unit)
		}
		cells = append(cells, cell)
	}
	for _, name := range s.Totals {
		cells = append(cells, totalCell(r, name))
	}
	return append(cells, goalCell(decision)), decision
}

// cellName names a cell by its Label parameters: "Lisp, conns=1".
func (s BoundGoal) cellName(r Row) string {
	var parts []string
	for i, k := range s.Label {
		v := displayName(s.Names, r.Param(k))
		if i > 0 {
			v = k + "=" + v
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, ", ")
}
