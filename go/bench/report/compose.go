package report

import (
	"math"
	"slices"
	"strconv"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// MetricView selects a metric for a table and says how to present it.
type MetricView struct {
	Name    string
	Label   string   // default MetricLabel(Name)
	Wording *Wording // default DefaultWording
}

// Metrics is shorthand for views of metrics with default presentation.
func Metrics(names ...string) []MetricView {
	views := make([]MetricView, len(names))
	for i, n := range names {
		views[i] = MetricView{Name: n}
	}
	return views
}

func (v MetricView) label() string {
	if v.Label != "" {
		return v.Label
	}
	return MetricLabel(v.Name)
}

func (v MetricView) wording(unit string) Wording {
	if v.Wording != nil {
		return *v.Wording
	}
	return DefaultWording(v.Name, unit)
}

// Column is one variant of a comparison: a name for the header and its
// scenario (nil when the variant was not measured).
type Column struct {
	Name string
	Row  *Row
}

// ComparisonTable puts variants side by side, one metric per row:
//
//	| Metric | List | Stream | Delta |
//	| Wall time | 3.50 s | 2.60 s | **Stream 26% faster** |
//
// With two columns the last column words the change of the second against
// the first (see Delta). With more, each later column's cells carry their
// change against the first: "**50.1 ms** (-24%)". Metrics no column has
// are left out.
func ComparisonTable(metrics []MetricView, cols []Column, sameWithin float64) Table {
	t := Table{Header: []string{"Metric"}}
	for _, c := range cols {
		t.Header = append(t.Header, c.Name)
	}
	pair := len(cols) == 2
	if pair {
		t.Header = append(t.Header, "Delta")
	}
	for _, mv := range metrics {
		unit, better, found := "", schema.Better(""), false
		for _, c := range cols {
			if c.Row == nil {
				continue
			}
			if m, ok := c.Row.Metric(mv.Name); ok {
				unit, better, found = m.Unit, m.Better, true
				break
			}
		}
		if !found {
			continue
		}
		row := []string{mv.label()}
		base, baseOK := columnValue(cols[0], mv.Name)
		for i, c := range cols {
			v, ok := columnValue(c, mv.Name)
			cell := cellText(c, v, ok, unit)
			if why := incomparableColumns(cols[0], c); !pair && i > 0 && ok && why != "" {
				cell += " (" + why + ")"
			} else if !pair && i > 0 && ok && baseOK && base != 0 {
				change := columnRatio(cols[0], c, mv.Name, v/base) - 1
				if math.Abs(change) >= sameWithin && improved(change, better) {
					cell = "**" + cell + "**"
				}
				cell += " (" + signedPercent(change) + ")"
			}
			row = append(row, cell)
		}
		if pair {
			a, aOK := columnValue(cols[0], mv.Name)
			b, bOK := columnValue(cols[1], mv.Name)
			d := missing
			if why := incomparableColumns(cols[0], cols[1]); why != "" {
				d += " (" + why + ")"
			} else if aOK && bOK && a != 0 {
				d = Delta(1, columnRatio(cols[0], cols[1], mv.Name, b/a), better, cols[1].Name, mv.wording(unit), sameWithin)
			} else if aOK && bOK {
				d = Delta(a, b, better, cols[1].Name, mv.wording(unit), sameWithin)
			}
			row = append(row, d)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// columnRatio is column c's metric over the base column's as every table
// gives a ratio (tableRatio: Hodges-Lehmann, paired by round where
// measured in turns), or medians, the ratio of their medians, where either
// has no repetitions to estimate from.
func columnRatio(base, c Column, metric string, medians float64) float64 {
	if base.Row == nil || c.Row == nil {
		return medians
	}
	bm, okb := base.Row.Metric(metric)
	cm, okc := c.Row.Metric(metric)
	if !okb || !okc || len(bm.Reps) == 0 || len(cm.Reps) == 0 {
		return medians
	}
	ratio, _ := tableRatio(cm, bm, pairedByRound(*base.Row, *c.Row, bm, cm))
	return ratio
}

// incomparableColumns says why two columns' rows must not be related (see
// Incomparable), or "" when they may, or when either is missing.
func incomparableColumns(a, b Column) string {
	if a.Row == nil || b.Row == nil {
		return ""
	}
	return Incomparable(*a.Row, *b.Row)
}

func columnValue(c Column, metric string) (float64, bool) {
	if c.Row == nil {
		return 0, false
	}
	return c.Row.Value(metric)
}

func cellText(c Column, v float64, ok bool, unit string) string {
	switch {
	case ok:
		return FormatValue(v, unit)
	case c.Row != nil && c.Row.Status == schema.StatusError:
		return "error"
	}
	return missing
}

// RatioStyle selects how RatioColumn writes a ratio.
type RatioStyle int

const (
	// RatioFactor writes value/baseline as a multiple: "0.72x".
	RatioFactor RatioStyle = iota
	// RatioPercent writes value/baseline as a percentage: "0.13%".
	RatioPercent
	// RatioSlowdown words the ratio by the metric's better direction:
	// "794x slower", "1.3x faster", "same".
	RatioSlowdown
)

// RatioColumn relates each value to a baseline, for a "ratio to X" column.
// NaN marks a missing value.
func RatioColumn(values []float64, baseline float64, better schema.Better, style RatioStyle) []string {
	out := make([]string, len(values))
	for i, v := range values {
		if math.IsNaN(v) || math.IsNaN(baseline) || baseline == 0 {
			out[i] = missing
			continue
		}
		r := v / baseline
		switch style {
		case RatioPercent:
			out[i] = FormatRatioPercent(r)
		case RatioSlowdown:
			out[i] = slowdown(r, better)
		default:
			out[i] = strconv.FormatFloat(r, 'f', 2, 64) + "x"
		}
	}
	return out
}

func slowdown(r float64, better schema.Better) string {
	if r == 0 {
		return missing
	}
	// speedup > 1 means the value is better than the baseline.
	speedup := r
	if better == schema.LowerIsBetter {
		speedup = 1 / r
	}
	switch {
	case math.Abs(speedup-1) < 0.005:
		return "same"
	case speedup < 1:
		return FormatFactor(1/speedup) + " slower"
	}
	return FormatFactor(speedup) + " faster"
}

// Series is a named sequence of (x, y) points, e.g. req/s by client count.
type Series struct {
	Name string
	X, Y []float64
}

func (s Series) at(x float64) (float64, bool) {
	for i, sx := range s.X {
		if sx == x && i < len(s.Y) && !math.IsNaN(s.Y[i]) {
			return s.Y[i], true
		}
	}
	return 0, false
}

// ScalingTable shows how well each series' throughput grows with x, the
// number of clients: efficiency(a->b) = (y(b)/y(a)) / (b/a). 100% is
// perfectly linear scaling; 10% means ten times the clients bought no
// more than the first. Columns cover each step and, with three or more
// points, first to last (in bold, the summary).
func ScalingTable(seriesHeader, xNoun string, series []Series) Table {
	var xs []float64
	for _, s := range series {
		for _, x := range s.X {
			if !slices.Contains(xs, x) {
				xs = append(xs, x)
			}
		}
	}
	slices.Sort(xs)
	type step struct{ from, to float64 }
	var steps []step
	for i := 1; i < len(xs); i++ {
		steps = append(steps, step{xs[i-1], xs[i]})
	}
	if len(xs) > 2 {
		steps = append(steps, step{xs[0], xs[len(xs)-1]})
	}
	t := Table{Header: []string{seriesHeader}}
	for _, st := range steps {
		t.Header = append(t.Header, FormatNumber(st.from)+"→"+FormatNumber(st.to)+" "+xNoun)
	}
	for _, s := range series {
		if len(s.X) == 0 {
			continue // nothing measured, e.g. an RPC kind one side lacks
		}
		row := []string{s.Name}
		for i, st := range steps {
			a, okA := s.at(st.from)
			b, okB := s.at(st.to)
			cell := missing
			if okA && okB && a > 0 && st.from > 0 {
				cell = FormatRatioPercent((b / a) / (st.to / st.from))
				if len(xs) > 2 && i == len(steps)-1 {
					cell = "**" + cell + "**"
				}
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// MatrixTable is the general pivot: one row per row key, one column per
// column key, cells from cell(row, col). corner heads the row-key column.
func MatrixTable(corner string, rows, cols []string, cell func(row, col string) string) Table {
	t := Table{Header: append([]string{corner}, cols...)}
	for _, r := range rows {
		cells := []string{r}
		for _, c := range cols {
			cells = append(cells, cell(r, c))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}
