package report

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
	// LogY puts the y axis on a log scale, for series that differ by orders
	// of magnitude (Go vs Lisp throughput). Non-positive values are not
	// drawn on it.
	LogY       bool
	Categories []string
	Series     []ChartSeries
}

// ChartSeries is one line, or one bar per category. Values[i] belongs to
// Categories[i]; NaN marks a missing point.
type ChartSeries struct {
	Name   string
	Values []float64
}
