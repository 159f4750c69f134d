package report

import (
	"fmt"
	"strings"
)

// Goal checks a speed goal stated as ratios to a baseline configuration and
// says, per configuration and in one closing line, whether the results meet
// it. It puts an issue's goal next to the figures that decide it, so a
// results file is judged the same way every time:
//
//   - CRI: "at 1024 containers, a streaming mode reaches at most 0.75x List's
//     latency at no more than 1.1x List's total CPU" (Any: one mode suffices);
//   - RouteGuide: "the Lisp server reaches at least 0.5x the Go server's
//     req/s for every RPC kind and client count" (every cell must).
type Goal struct {
	Title     string
	Statement string            // the goal in words, printed above the table
	Where     map[string]string // only scenarios with these parameters count
	GroupBy   []string          // a baseline per group (e.g. rpc, clients)
	// Vary are the parameters that make a configuration, Vary[0] leading,
	// as in AllConfigurations; Baseline is Vary[0]'s value to compare with.
	Vary     []string
	Baseline string
	Names    map[string]string // display names of Vary[0]'s values
	Limits   []RatioLimit
	Context  []MetricView // shown as measured, e.g. the host's CPU pressure
	// Any: a group meets the goal when any of its configurations meets
	// every limit. Otherwise every configuration of every group must.
	Any bool
}

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

func (l RatioLimit) meets(ratio float64) bool {
	return (l.Max == 0 || ratio <= l.Max) && (l.Min == 0 || ratio >= l.Min)
}

// goalVerdict is one configuration's row: its ratios and whether it meets
// every limit. A configuration without a figure (a failed run) does not.
type goalVerdict struct {
	group, config string
	cells         []string
	met           bool
}

func (s Goal) Render(d *Dataset, p *Page) {
	if len(s.Vary) == 0 || len(s.Limits) == 0 {
		return
	}
	data := d.Filter(func(r Row) bool {
		for k, v := range s.Where {
			if r.Param(k) != v {
				return false
			}
		}
		return true
	})
	configs := AllConfigurations{Vary: s.Vary, Order: []string{s.Baseline}, Names: s.Names}
	var rows []goalVerdict
	var groupsMet, groups int
	for _, g := range data.GroupBy(s.GroupBy) {
		cols := configs.columns(g.Data)
		if len(cols) < 2 || cols[0].Row.Param(s.Vary[0]) != s.Baseline {
			continue
		}
		groups++
		anyMet, allMet := false, true
		for _, c := range cols[1:] {
			v := s.verdict(*cols[0].Row, *c.Row)
			v.group, v.config = g.Label, c.Name
			rows = append(rows, v)
			anyMet = anyMet || v.met
			allMet = allMet && v.met
		}
		if (s.Any && anyMet) || (!s.Any && allMet) {
			groupsMet++
		}
	}
	if groups == 0 {
		return
	}
	titled(p, s.Title)
	if s.Statement != "" {
		p.Text(s.Statement)
	}
	p.Table(s.table(rows))
	p.Text(s.summary(rows, groupsMet, groups))
}

func (s Goal) verdict(base, r Row) goalVerdict {
	v := goalVerdict{met: true}
	for _, l := range s.Limits {
		b, okb := base.Value(l.Metric)
		x, okx := r.Value(l.Metric)
		if !okb || !okx || b == 0 {
			v.cells = append(v.cells, missing)
			v.met = false
			continue
		}
		ratio := x / b
		v.cells = append(v.cells, fmt.Sprintf("%.2fx", ratio))
		v.met = v.met && l.meets(ratio)
	}
	for _, mv := range s.Context {
		cell := missing
		if m, ok := r.Metric(mv.Name); ok {
			cell = FormatMetric(mv.Name, m.Median, m.Unit)
		}
		v.cells = append(v.cells, cell)
	}
	return v
}

func (s Goal) table(rows []goalVerdict) Table {
	t := Table{}
	grouped := len(s.GroupBy) > 0
	if grouped {
		t.Header = append(t.Header, "Scenario")
	}
	t.Header = append(t.Header, "Configuration")
	baseline := displayName(s.Names, s.Baseline)
	for _, l := range s.Limits {
		t.Header = append(t.Header, MetricLabel(l.Metric)+" / "+baseline)
	}
	for _, mv := range s.Context {
		t.Header = append(t.Header, mv.label())
	}
	t.Header = append(t.Header, "Goal")
	for _, v := range rows {
		var row []string
		if grouped {
			row = append(row, v.group)
		}
		row = append(row, v.config)
		row = append(row, v.cells...)
		if v.met {
			row = append(row, "**met**")
		} else {
			row = append(row, "not met")
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// summary is the closing line: the limits, and which configurations meet
// them or which groups fall short.
func (s Goal) summary(rows []goalVerdict, groupsMet, groups int) string {
	limits := make([]string, len(s.Limits))
	for i, l := range s.Limits {
		limits[i] = l.String()
	}
	var met, missed []string
	for _, v := range rows {
		name := strings.TrimPrefix(v.group+": "+v.config, ": ")
		if v.met {
			met = append(met, name)
		} else {
			missed = append(missed, name)
		}
	}
	goal := "of " + displayName(s.Names, s.Baseline) + "'s: " + strings.Join(limits, ", ")
	switch {
	case s.Any && groupsMet == groups:
		return fmt.Sprintf("**Goal met** (%s) by %s.", goal, strings.Join(met, "; "))
	case s.Any:
		return fmt.Sprintf("**Goal not met** (%s): no configuration meets every limit in %d of %d scenarios.", goal, groups-groupsMet, groups)
	case len(missed) == 0:
		return fmt.Sprintf("**Goal met** (%s) in all %d cells.", goal, len(rows))
	}
	return fmt.Sprintf("**Goal not met** (%s) in %d of %d cells: %s.", goal, len(missed), len(rows), strings.Join(missed, "; "))
}
