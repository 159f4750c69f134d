package report

import "math"

// ChartKind selects how a chart draws its series.
type ChartKind int

const (
	// LineChart joins each series' points across the categories, for
	// trends such as req/s as the client count grows.
	LineChart ChartKind = iota
	// BarChart draws a group of bars per category, one per series, for
	// side-by-side comparisons.
	BarChart
)

// Chart is a chart's content, independent of how it is drawn. The x axis is
// categorical (client counts, payload sizes, competitors): categories are
// evenly spaced in the given order, which reads well for the 1/10/100
// series the suites use.
type Chart struct {
	Title  string
	XLabel string
	YLabel string
	Kind   ChartKind
	// LogY puts the y axis on a log scale when the values span an order of
	// magnitude or more (Go vs Lisp throughput at 1 and 100 clients); values
	// within one order of magnitude keep a linear axis, on which equal
	// differences look equal. Non-positive values are not drawn on a log
	// axis.
	LogY       bool
	Categories []string
	Series     []ChartSeries
}

// ChartSeries is one line, or one bar per category. Values[i] belongs to
// Categories[i]; NaN marks a missing point. Lo and Hi, when set, are the
// ends of each value's error bar (NaN: none).
type ChartSeries struct {
	Name   string
	Values []float64
	Lo, Hi []float64
}

// errorBar returns the ends of point i's error bar, if it has one.
func (s ChartSeries) errorBar(i int) (lo, hi float64, ok bool) {
	if i >= len(s.Lo) || i >= len(s.Hi) || math.IsNaN(s.Lo[i]) || math.IsNaN(s.Hi[i]) || s.Lo[i] == s.Hi[i] {
		return 0, 0, false
	}
	return s.Lo[i], s.Hi[i], true
}
