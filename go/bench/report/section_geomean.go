package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// SweepGeoMean is a sweep's headline: for each metric, the geometric mean
// over the sweep's cells of one configuration's figure over the baseline's,
// with its interval, so that no single operating point stands for the
// sweep. Repetitions pair by round within each cell (the suite measured the
// configurations in turns); round i's geometric mean is the mean over the
// cells of each one's i-th log ratio, and the rounds' means get the paired
// interval of paired_interval.go. The range gives each cell's own paired
// estimate, the same Hodges-Lehmann estimator. Each cell must have been measured, with
// the same number of rounds, for a figure to be given: a mean over fewer
// cells than the sweep names would describe another sweep.
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
	t := Table{Header: []string{"Metric", "Cells", fmt.Sprintf("%s / %s, geometric mean",
		displayName(s.Names, s.configValue()), displayName(s.Names, s.Baseline)), "Range over the cells"}}
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
	count := fmt.Sprintf("%d", len(cells))
	var logs [][]float64 // per cell, its rounds' log ratios
	lo, hi := math.Inf(1), math.Inf(-1)
	var missing []string
	for _, cell := range cells {
		ratios, ok := s.cellRatios(data, cell, metric)
		if !ok {
			missing = append(missing, cellName(cell))
			continue
		}
		logs = append(logs, ratios)
		if r, err := newPairedRatioInterval(expAll(ratios), ones(len(ratios)), goalAlpha); err == nil {
			lo, hi = math.Min(lo, r.Estimate), math.Max(hi, r.Estimate)
		}
	}
	if len(missing) > 0 {
		return []string{label, count, fmt.Sprintf("not given: %d of %d cells not measured in full (%s)",
			len(missing), len(cells), strings.Join(missing, "; ")), ""}
	}
	n := len(logs[0])
	for _, l := range logs {
		if len(l) != n {
			return []string{label, count, "not given: the cells have different numbers of rounds", ""}
		}
	}
	// Round i's geometric mean, as a ratio of two figures whose logs are
	// the mean log ratio and 0: the paired interval of one sample.
	x := make([]float64, n)
	for i := range n {
		var sum float64
		for _, l := range logs {
			sum += l[i]
		}
		x[i] = math.Exp(sum / float64(len(logs)))
	}
	r, err := newPairedRatioInterval(x, ones(n), goalAlpha)
	if err != nil {
		return []string{label, count, "no interval: " + err.Error(), ""}
	}
	return []string{label, count, intervalText(r),
		fmt.Sprintf("%.2fx to %.2fx", lo, hi)}
}

// cellRatios are one cell's per-round log ratios of the configuration's
// metric over the baseline's.
func (s SweepGeoMean) cellRatios(data *Dataset, cell map[string]string, metric string) ([]float64, bool) {
	find := func(config map[string]string) (schema.Metric, bool) {
		match := map[string]string{}
		for k, v := range cell {
			match[k] = v
		}
		for k, v := range config {
			match[k] = v
		}
		row, ok := data.Find(match)
		if !ok || row.Status != schema.StatusOK {
			return schema.Metric{}, false
		}
		return row.Metric(metric)
	}
	x, ok1 := find(s.Config)
	base, ok2 := find(map[string]string{s.Vary[0]: s.Baseline})
	if !ok1 || !ok2 || len(x.Reps) == 0 || len(x.Reps) != len(base.Reps) {
		return nil, false
	}
	out := make([]float64, len(x.Reps))
	for i := range x.Reps {
		if x.Reps[i] <= 0 || base.Reps[i] <= 0 {
			return nil, false
		}
		out[i] = math.Log(x.Reps[i]) - math.Log(base.Reps[i])
	}
	return out, true
}

func expAll(logs []float64) []float64 {
	out := make([]float64, len(logs))
	for i, l := range logs {
		out[i] = math.Exp(l)
	}
	return out
}

func ones(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
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
