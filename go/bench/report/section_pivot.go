package report

import (
	"math"
	"slices"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// PivotTable shows one metric with one parameter down and another across,
// per group: "Clients | Go | Lisp" for req/s, or "RPC | 1 | 10 | 100".
// Ratio adds the columns relating two of the column values, like
// "Lisp/Go" and "Slowdown".
type PivotTable struct {
	Title    string
	GroupBy  []string
	Rows     string
	Cols     string
	Metric   string
	Corner   string            // default MetricLabel(Rows)
	Names    map[string]string // display names of row and column values
	ColOrder []string
	Ratio    *PivotRatio
	// Total shows the sum of the repetitions instead of their median: for
	// a count of failures, which a median of 0 would hide.
	Total bool
}

// PivotRatio relates column Num to column Den in each row.
type PivotRatio struct {
	Num, Den string
	Percent  bool // add "Num/Den" as a percentage
	Factor   bool // add "Num/Den" as a multiple
	Slowdown bool // add "Slowdown" worded by the metric's direction
}

func (s PivotTable) Render(d *Dataset, p *Page) {
	unit, better, ok := d.metricInfo(s.Metric)
	if !ok || !d.Has(s.Rows) || !d.Has(s.Cols) {
		return // results from before the metric existed, or another suite's
	}
	titled(p, s.Title)
	corner := s.Corner
	if corner == "" {
		corner = MetricLabel(s.Rows)
	}
	for _, g := range d.GroupBy(s.GroupBy) {
		// Columns the group has no scenario for are left out, not shown
		// as a column of dashes.
		rows, cols := g.Data.Values(s.Rows), ordered(g.Data.Values(s.Cols), s.ColOrder)
		cell := func(r, c string) string {
			row, ok := g.Data.Find(map[string]string{s.Rows: r, s.Cols: c})
			if !ok {
				return missing
			}
			if s.Total {
				return totalCell(row, s.Metric)
			}
			return columnCell(row, s.Metric, unit)
		}
		t := MatrixTable(corner, rows, cols, cell)
		for i, c := range cols {
			t.Header[i+1] = s.columnName(c)
		}
		// Drop rows with no measurement at all (unary has no msg/s of
		// its own; one side may not implement an RPC kind).
		var keys []string
		kept := t.Rows[:0]
		for _, r := range t.Rows {
			if slices.ContainsFunc(r[1:], func(c string) bool { return c != missing }) {
				keys = append(keys, r[0])
				kept = append(kept, r)
			}
		}
		t.Rows = kept
		if s.Ratio != nil && slices.Contains(cols, s.Ratio.Num) && slices.Contains(cols, s.Ratio.Den) {
			s.addRatios(g.Data, &t, keys, better)
		}
		for _, r := range t.Rows {
			r[0] = displayName(s.Names, r[0])
		}
		groupHeading(p, g)
		p.Table(t)
	}
}

// columnName heads a pivot column: a number gets its parameter
// ("clients=10"); a name gets the metric ("Go (req/s)").
func (s PivotTable) columnName(v string) string {
	if _, ok := s.Names[v]; !ok {
		if _, err := parseFloat(v); err == nil {
			return s.Cols + "=" + v
		}
	}
	return displayName(s.Names, v) + " (" + MetricLabel(s.Metric) + ")"
}

func (s PivotTable) addRatios(d *Dataset, t *Table, rows []string, better schema.Better) {
	num, den := make([]float64, len(rows)), make([]float64, len(rows))
	tests := make([]string, len(rows))
	refused := make([]string, len(rows))
	for i, r := range rows {
		nr, okn := s.row(d, r, s.Ratio.Num)
		dr, okd := s.row(d, r, s.Ratio.Den)
		n, okn := s.metricOf(nr, okn)
		m, okd := s.metricOf(dr, okd)
		if !okn || !okd {
			num[i], den[i] = math.NaN(), math.NaN()
			continue
		}
		if why := Incomparable(nr, dr); why != "" {
			num[i], den[i], refused[i] = math.NaN(), math.NaN(), why
			continue
		}
		ratio, note := tableRatio(n, m, pairedByRound(dr, nr, m, n))
		num[i], den[i], tests[i] = ratio, 1, " "+note
	}
	ratioCells := func(style RatioStyle, withTest bool) []string {
		out := make([]string, len(rows))
		for i := range rows {
			out[i] = RatioColumn([]float64{num[i]}, den[i], better, style)[0]
			switch {
			case refused[i] != "":
				out[i] = missing + " (" + refused[i] + ")"
			case withTest && out[i] != missing:
				out[i] += tests[i]
			}
		}
		return out
	}
	// The test is the same for every wording of one ratio: it goes with
	// the first ratio column only.
	withTest := true
	name := displayName(s.Names, s.Ratio.Num) + "/" + displayName(s.Names, s.Ratio.Den)
	if s.Ratio.Percent {
		t.AddColumn(name, ratioCells(RatioPercent, withTest))
		withTest = false
	}
	if s.Ratio.Factor {
		t.AddColumn(name, ratioCells(RatioFactor, withTest))
		withTest = false
	}
	if s.Ratio.Slowdown {
		t.AddColumn(displayName(s.Names, s.Ratio.Num)+" vs "+displayName(s.Names, s.Ratio.Den), ratioCells(RatioSlowdown, withTest))
	}
}

// row is the scenario at row r, column c of d.
func (s PivotTable) row(d *Dataset, r, c string) (Row, bool) {
	return d.Find(map[string]string{s.Rows: r, s.Cols: c})
}

// metricOf is the pivot's metric of row, if it was found, succeeded and
// measured it.
func (s PivotTable) metricOf(row Row, ok bool) (schema.Metric, bool) {
	if !ok || row.Status != schema.StatusOK {
		return schema.Metric{}, false
	}
	return row.Metric(s.Metric)
}
