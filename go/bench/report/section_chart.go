package report

import (
	"math"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// ChartSection draws one chart per group: Metric over the values of X
// (categories), one line or bar set per value of Series.
type ChartSection struct {
	Title   string // chart title; the group label is appended
	GroupBy []string
	Kind    ChartKind
	X       string // parameter on the x axis; empty: scenario names
	Series  string // parameter naming the series; empty: one series
	Metric  string // empty: the first preferred metric
	LogY    bool
	Names   map[string]string
	In      map[string][]string // only scenarios whose parameter is one of these values
}

func (s ChartSection) Render(d *Dataset, p *Page) {
	d = d.Matching(nil, s.In)
	metric := s.Metric
	if metric == "" {
		if pm := preferredMetrics(d); len(pm) > 0 {
			metric = pm[0].Name
		}
	}
	unit, _, ok := d.metricInfo(metric)
	if !ok {
		return
	}
	for _, g := range d.GroupBy(s.GroupBy) {
		c := Chart{Title: s.Title, Kind: s.Kind, LogY: s.LogY}
		if c.Title == "" {
			c.Title = MetricLabel(metric)
		}
		if g.Label != "" {
			c.Title += " — " + g.Label
		}
		xKey := func(r Row) string { return r.Scenario }
		c.XLabel = "Scenario"
		if s.X != "" {
			xKey = func(r Row) string { return r.Param(s.X) }
			c.XLabel = MetricLabel(s.X)
			c.Categories = g.Data.Values(s.X)
		} else {
			for _, r := range g.Data.Rows {
				c.Categories = append(c.Categories, r.Scenario)
			}
		}
		seriesNames := []string{""}
		if s.Series != "" {
			seriesNames = g.Data.Values(s.Series)
		}
		for _, sn := range seriesNames {
			cs := ChartSeries{Name: displayName(s.Names, sn), Values: make([]float64, len(c.Categories)),
				Lo: make([]float64, len(c.Categories)), Hi: make([]float64, len(c.Categories))}
			if sn == "" {
				cs.Name = MetricLabel(metric)
			}
			for i, cat := range c.Categories {
				cs.Values[i], cs.Lo[i], cs.Hi[i] = math.NaN(), math.NaN(), math.NaN()
				for _, r := range g.Data.Rows {
					if xKey(r) == cat && (sn == "" || r.Param(s.Series) == sn) {
						if v, ok := r.Value(metric); ok {
							m, _ := r.Metric(metric)
							cs.Values[i] = v
							cs.Lo[i], cs.Hi[i] = interval(m)
						}
						break
					}
				}
			}
			c.Series = append(c.Series, cs)
		}
		axisUnit := scaleTimes(c.Series, unit)
		c.YLabel = MetricLabel(metric)
		if c.YLabel != axisUnit {
			c.YLabel += " (" + axisUnit + ")"
		}
		p.Chart(c)
	}
}

// scaleTimes rescales time values in place so that the axis reads "65 ms"
// rather than "65M ns", and returns the unit to label the axis with.
func scaleTimes(series []ChartSeries, unit string) string {
	var toSeconds float64
	switch unit {
	case schema.UnitNanoseconds:
		toSeconds = 1e-9
	case schema.UnitSeconds:
		toSeconds = 1
	default:
		return unit
	}
	top := 0.0
	for _, s := range series {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				top = math.Max(top, v*toSeconds)
			}
		}
	}
	scale, name := 1.0, "s"
	switch {
	case top < 1e-6:
		scale, name = 1e9, "ns"
	case top < 1e-3:
		scale, name = 1e6, "µs"
	case top < 1:
		scale, name = 1e3, "ms"
	}
	for _, s := range series {
		for _, vs := range [][]float64{s.Values, s.Lo, s.Hi} {
			for i := range vs {
				vs[i] *= toSeconds * scale
			}
		}
	}
	return name
}
