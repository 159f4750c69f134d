package report

import (
	"math"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// ScenarioTable lists scenarios as rows and metrics as columns, per group,
// optionally with a ratio column against a baseline row (the tournament's
// "vs RealGRPC"). Rows are labelled by RowParams (default: the scenario
// name).
type ScenarioTable struct {
	Title     string
	Where     map[string]string   // only scenarios with these parameters
	In        map[string][]string // and whose parameter is one of these values
	GroupBy   []string
	RowParams []string
	RowHeader string       // default "Scenario" or the first RowParams
	Metrics   []MetricView // default: the commonly read harness metrics
	Ratio     *Ratio
}

// Ratio adds a column relating one metric of each row to a baseline row.
type Ratio struct {
	Metric   string
	Param    string // the row parameter naming the baseline; default RowParams[0]
	Baseline string // its value; default the first row
	Style    RatioStyle
	Header   string // default "<metric> vs <baseline>"
}

func (s ScenarioTable) Render(d *Dataset, p *Page) {
	d = d.Matching(s.Where, s.In)
	if len(d.Rows) == 0 {
		return
	}
	titled(p, s.Title)
	for _, g := range d.GroupBy(s.GroupBy) {
		groupHeading(p, g)
		p.Table(s.table(g.Data))
	}
}

func (s ScenarioTable) table(d *Dataset) Table {
	views := s.Metrics
	if len(views) == 0 {
		views = preferredMetrics(d)
	}
	header := s.RowHeader
	if header == "" {
		header = "Scenario"
		if len(s.RowParams) > 0 {
			header = MetricLabel(s.RowParams[0])
		}
	}
	t := Table{Header: []string{header}}
	for _, mv := range views {
		unit, _, _ := d.metricInfo(mv.Name)
		t.Header = append(t.Header, columnHeader(mv, unit))
	}
	for _, r := range d.Rows {
		row := []string{s.rowLabel(r)}
		for _, mv := range views {
			unit, _, _ := d.metricInfo(mv.Name)
			row = append(row, columnCell(r, mv.Name, unit))
		}
		t.Rows = append(t.Rows, row)
	}
	if s.Ratio != nil {
		s.addRatio(d, &t)
	}
	return t
}

func (s ScenarioTable) rowLabel(r Row) string {
	if len(s.RowParams) == 0 {
		return r.Scenario
	}
	var parts []string
	for _, k := range s.RowParams {
		if v := r.Param(k); v != "" {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		return r.Scenario
	}
	return strings.Join(parts, " ")
}

func (s ScenarioTable) addRatio(d *Dataset, t *Table) {
	rt := *s.Ratio
	if rt.Param == "" && len(s.RowParams) > 0 {
		rt.Param = s.RowParams[0]
	}
	var base *Row
	baseName := rt.Baseline
	for i, r := range d.Rows {
		if (rt.Baseline == "" && i == 0) || (rt.Baseline != "" && r.Param(rt.Param) == rt.Baseline) {
			base = &d.Rows[i]
			if baseName == "" {
				baseName = s.rowLabel(r)
			}
			break
		}
	}
	baseValue := math.NaN()
	var baseMetric schema.Metric
	if base != nil {
		if v, ok := base.Value(rt.Metric); ok {
			baseValue = v
			baseMetric, _ = base.Metric(rt.Metric)
		}
	}
	values := make([]float64, len(d.Rows))
	for i, r := range d.Rows {
		values[i] = math.NaN()
		if v, ok := r.Value(rt.Metric); ok {
			values[i] = v
		}
	}
	_, better, _ := d.metricInfo(rt.Metric)
	header := rt.Header
	if header == "" {
		header = MetricLabel(rt.Metric) + " vs " + baseName
	}
	cells := RatioColumn(values, baseValue, better, rt.Style)
	for i, r := range d.Rows {
		if cells[i] == missing || base == nil || &d.Rows[i] == base {
			continue
		}
		if why := Incomparable(r, *base); why != "" {
			cells[i] = missing + " (" + why + ")"
			continue
		}
		m, _ := r.Metric(rt.Metric)
		ratio, note := tableRatio(m, baseMetric, pairedByRound(*base, r, baseMetric, m))
		if cells[i] = RatioColumn([]float64{ratio}, 1, better, rt.Style)[0]; cells[i] != missing {
			cells[i] += " " + note
		}
	}
	t.AddColumn(header, cells)
}
