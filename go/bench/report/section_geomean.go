package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// SweepGeoMean is a sweep's headline: for each metric, the geometric mean
// over the sweep's cells of one configuration's figure over the baseline's,
// so that no single operating point stands for the sweep. Each cell is
// estimated first, on its own: the Hodges-Lehmann estimate of its rounds'
// paired ratios (paired_interval.go), the estimator of every goal. The
// headline is the geometric mean of those estimates, and its interval
// treats the cells as a sample of operating points (Student's t over their
// logs): it says where the ratio lies across the sweep, not only how noisy
// each cell was. Rounds are never paired across cells, which ran at
// different times. A capacity metric (req/s) counts only the cells both
// servers limited: a figure a saturated load generator set says nothing
// about a server. Every other cell must have been measured for a figure
// to be given: a mean over fewer cells than the sweep names would describe
// another sweep.
type SweepGeoMean struct {
	Title     string
	Statement string
	Where     map[string]string // only scenarios with these parameters count
	// Cells names the sweep's cells: every combination of these values.
	Cells map[string][]string
	// Vary, Baseline, Config and Names pick the two configurations, as in
	// Goal.
	Vary     []string
	Baseline string
	Config   map[string]string
	Names    map[string]string
	Metrics  []string
	// Bottleneck is the parameter saying which side limited a run; a
	// metric in Capacity counts a cell only when it says "server" for both.
	Bottleneck string
	Capacity   []string
}

func (s SweepGeoMean) Render(d *Dataset, p *Page) {
	data := d.Matching(s.Where, nil)
	if len(data.Rows) == 0 || len(s.Vary) == 0 {
		return
	}
	titled(p, s.Title)
	if s.Statement != "" {
		p.Text(s.Statement)
	}
	cells := s.cellList()
	t := Table{Header: []string{"Metric", "Cells", fmt.Sprintf("%s / %s, geometric mean (95%% over the cells)",
		displayName(s.Names, s.configValue()), displayName(s.Names, s.Baseline)), "Range of the cells' estimates"}}
	for _, metric := range s.Metrics {
		t.Rows = append(t.Rows, s.row(data, cells, metric))
	}
	p.Table(t)
}

// configValue is the configuration's value of the first Vary parameter.
func (s SweepGeoMean) configValue() string { return s.Config[s.Vary[0]] }

// cellList is every combination of the Cells values, in a fixed order.
func (s SweepGeoMean) cellList() []map[string]string {
	keys := make([]string, 0, len(s.Cells))
	for k := range s.Cells {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := []map[string]string{{}}
	for _, k := range keys {
		var next []map[string]string
		for _, c := range out {
			for _, v := range s.Cells[k] {
				m := map[string]string{k: v}
				for ck, cv := range c {
					m[ck] = cv
				}
				next = append(next, m)
			}
		}
		out = next
	}
	return out
}

// row is one metric's line: the geometric mean and its interval, or why
// there is none.
func (s SweepGeoMean) row(data *Dataset, cells []map[string]string, metric string) []string {
	label := MetricLabel(metric)
	capacity := slices.Contains(s.Capacity, metric)
	var logs []float64 // each counted cell's log estimate
	var missing, unbound, refused []string
	for _, cell := range cells {
		est, bound, why, ok := s.cellEstimate(data, cell, metric)
		switch {
		case !ok:
			missing = append(missing, cellName(cell))
		case why != "":
			refused = append(refused, cellName(cell)+" ("+why+")")
		case capacity && !bound:
			unbound = append(unbound, cellName(cell))
		default:
			logs = append(logs, math.Log(est))
		}
	}
	count := fmt.Sprintf("%d", len(logs))
	if len(unbound) > 0 {
		count = fmt.Sprintf("%d of %d (not server-bound: %s)", len(logs), len(cells), strings.Join(unbound, "; "))
	}
	switch {
	case len(refused) > 0:
		return []string{label, fmt.Sprintf("%d", len(cells)), fmt.Sprintf("not given: %d of %d cells not comparable: %s",
			len(refused), len(cells), strings.Join(refused, "; ")), ""}
	case len(missing) > 0:
		return []string{label, fmt.Sprintf("%d", len(cells)), fmt.Sprintf("not given: %d of %d cells not measured (%s)",
			len(missing), len(cells), strings.Join(missing, "; ")), ""}
	case len(logs) < 2:
		return []string{label, count, "not given: fewer than two cells to combine", ""}
	}
	mean, half := meanInterval(logs)
	lo, hi := slices.Min(logs), slices.Max(logs)
	return []string{label, count,
		fmt.Sprintf("%.2fx (%.2fx to %.2fx)", math.Exp(mean), math.Exp(mean-half), math.Exp(mean+half)),
		fmt.Sprintf("%.2fx to %.2fx", math.Exp(lo), math.Exp(hi))}
}

// cellEstimate is one cell's paired estimate of the configuration's metric
// over the baseline's, and whether both servers limited both runs.
func (s SweepGeoMean) cellEstimate(data *Dataset, cell map[string]string, metric string) (estimate float64, serverBound bool, why string, ok bool) {
	find := func(config map[string]string) (Row, schema.Metric, bool) {
		match := map[string]string{}
		for k, v := range cell {
			match[k] = v
		}
		for k, v := range config {
			match[k] = v
		}
		row, found := data.Find(match)
		if !found || row.Status != schema.StatusOK {
			return Row{}, schema.Metric{}, false
		}
		m, has := row.Metric(metric)
		return row, m, has
	}
	xr, x, ok1 := find(s.Config)
	br, base, ok2 := find(map[string]string{s.Vary[0]: s.Baseline})
	if !ok1 || !ok2 {
		return 0, false, "", false
	}
	// What the goals refuse to compare, the headline does not combine.
	why = cmp.Or(Incomparable(br, xr), unequalParallelism(br, xr))
	if why != "" {
		return 0, false, why, true
	}
	r, err := newPairedRatioInterval(x.Reps, base.Reps, goalAlpha)
	if err != nil {
		return 0, false, "", false
	}
	bound := s.Bottleneck != "" && xr.Param(s.Bottleneck) == bottleneckServer && br.Param(s.Bottleneck) == bottleneckServer
	return r.Estimate, bound, "", true
}

// meanInterval is the mean of xs and the half-width of its two-sided 95%
// interval by Student's t (xs a sample of at least two).
func meanInterval(xs []float64) (mean, half float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, studentT975(len(xs)-1) * math.Sqrt(ss/(n-1)/n)
}

// studentT975 is the 97.5th percentile of Student's t with df degrees of
// freedom.
func studentT975(df int) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df >= 1 && df <= len(table) {
		return table[df-1]
	}
	return 1.96
}

// cellName names a cell by its parameters, in a fixed order.
func cellName(cell map[string]string) string {
	keys := make([]string, 0, len(cell))
	for k := range cell {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + cell[k]
	}
	return strings.Join(parts, ", ")
}
