package report

import (
	"fmt"
	"slices"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// FloorSplit splits each configuration's cost in two, with a floor variant
// measured in the same turns: the same messages over the same transport,
// with nothing encoded nor decoded. Its cost is what the transport (grpc-go)
// takes alone, the least any codec can reach within its API; the rest is
// the application's encoding, decoding and their garbage. For a goal that
// bounds a configuration's cost as a multiple of the baseline's, the split
// says how small that rest would have to be, given the floor: where it
// would have to be smaller than the baseline's own, the transport's cost
// per message is what stands between the two.
//
// Repetitions pair by round, as the suite measured them in turns: the part
// above the floor is each round's figure less its floor's, and the ratio of
// two parts gets the paired interval of paired_interval.go. Each column is
// the median of its own per-round figures, so the columns need not add up.
type FloorSplit struct {
	Title     string
	Statement string
	Where     map[string]string // only scenarios with these parameters count
	GroupBy   []string
	Variant   string // the parameter naming the floor (e.g. codec)
	Floor     string // its value for the floor
	// Vary, Baseline and Names make the configurations, as in Goal.
	Vary     []string
	Baseline string
	Names    map[string]string
	Metric   string
	// Goals are limits of the form "a configuration costs at most Max
	// times the baseline's Metric": for each, the split says what the
	// floor leaves above it.
	Goals []FloorGoal
}

// FloorGoal is one limit on a configuration, named by its Vary parameters.
type FloorGoal struct {
	Config map[string]string
	Max    float64
}

func (g FloorGoal) matches(r Row) bool {
	for k, v := range g.Config {
		if r.Param(k) != v {
			return false
		}
	}
	return len(g.Config) > 0
}

func (s FloorSplit) Render(d *Dataset, p *Page) {
	if len(s.Vary) == 0 {
		return
	}
	data := d.Matching(s.Where, nil).Filter(func(r Row) bool { return r.Status == schema.StatusOK })
	floor := data.Where(s.Variant, s.Floor)
	if len(floor.Rows) == 0 {
		return
	}
	titled(p, s.Title)
	if s.Statement != "" {
		p.Text(s.Statement)
	}
	configs := AllConfigurations{Vary: s.Vary, Order: []string{s.Baseline}, Names: s.Names}
	for _, g := range data.GroupBy(append(slices.Clone(s.GroupBy), s.Variant)) {
		cols := configs.columns(g.Data)
		if len(cols) < 2 || cols[0].Row.Param(s.Variant) == s.Floor || cols[0].Row.Param(s.Vary[0]) != s.Baseline {
			continue
		}
		s.renderGroup(p, g, cols, floor)
	}
}

// floorPart is one configuration: its reps, its floor's, and the part
// above the floor, round by round.
type floorPart struct {
	name                string
	total, floor, above []float64
	unit                string
}

// part is configuration c's split, with the floor row of the same
// configuration in the same group.
func (s FloorSplit) part(c Column, floor *Dataset) (floorPart, bool) {
	match := map[string]string{s.Variant: s.Floor}
	for _, k := range append(slices.Clone(s.GroupBy), s.Vary...) {
		if v := c.Row.Param(k); v != "" {
			match[k] = v
		}
	}
	fr, ok := floor.Find(match)
	if !ok {
		return floorPart{}, false
	}
	m, ok1 := c.Row.Metric(s.Metric)
	fm, ok2 := fr.Metric(s.Metric)
	if !ok1 || !ok2 || len(m.Reps) != len(fm.Reps) || len(m.Reps) == 0 {
		return floorPart{}, false
	}
	fp := floorPart{name: c.Name, total: m.Reps, floor: fm.Reps, unit: m.Unit}
	for i := range m.Reps {
		fp.above = append(fp.above, m.Reps[i]-fm.Reps[i])
	}
	return fp, true
}

func (s FloorSplit) renderGroup(p *Page, g Group, cols []Column, floor *Dataset) {
	base, ok := s.part(cols[0], floor)
	if !ok {
		return
	}
	label := MetricLabel(s.Metric)
	t := Table{Header: []string{"Configuration", label, "At the floor (no encoding, no decoding)", "Above the floor", "Above the floor / " + cols[0].Name}}
	type judged struct {
		part  floorPart
		ratio ratioInterval
		goal  FloorGoal
	}
	var goals []judged
	for _, c := range cols {
		fp, ok := s.part(c, floor)
		if !ok {
			continue
		}
		ratio := "1.00x"
		if c.Row != cols[0].Row {
			ratio = "no interval"
			if r, err := newPairedRatioInterval(fp.above, base.above, goalAlpha); err == nil {
				ratio = intervalText(r)
				for _, goal := range s.Goals {
					if goal.matches(*c.Row) {
						goals = append(goals, judged{fp, r, goal})
					}
				}
			}
		}
		t.Rows = append(t.Rows, []string{fp.name,
			FormatMetric(s.Metric, schema.Median(fp.total), fp.unit),
			FormatMetric(s.Metric, schema.Median(fp.floor), fp.unit),
			FormatMetric(s.Metric, schema.Median(fp.above), fp.unit),
			ratio})
	}
	groupHeading(p, g)
	p.Table(t)
	for _, j := range goals {
		p.Text(s.allowance(base, j.part, j.ratio, j.goal.Max))
	}
}

// allowance says what a limit of limit times the baseline leaves above
// the floor for part, round by round, beside what part measured there. It
// decides nothing: the goal's own section does, on the totals.
func (s FloorSplit) allowance(base, part floorPart, ratio ratioInterval, limit float64) string {
	// part at most limit times the baseline, in round i:
	// floor_i + above_i <= limit * total_i, so above_i may be at most
	// limit * total_i - floor_i, a share of the baseline's above_i.
	allowed := make([]float64, len(base.total))
	shares := make([]float64, len(base.total))
	for i := range base.total {
		allowed[i] = limit*base.total[i] - part.floor[i]
		shares[i] = allowed[i] / base.above[i]
	}
	share := schema.Median(shares)
	than := "less than"
	if share >= 1 {
		than = "at least as much as"
	}
	return fmt.Sprintf("Given %s's floor, it costs at most %gx %s's %s only if its part above the floor is at most %s, "+
		"%.2fx %s's (medians over the rounds): %s %s spends above its own floor. It measured %s.",
		part.name, limit, base.name, MetricLabel(s.Metric),
		FormatMetric(s.Metric, schema.Median(allowed), part.unit), share, base.name, than, base.name, intervalText(ratio))
}

// intervalText is a ratio with its two one-sided bounds, deciding nothing.
func intervalText(r ratioInterval) string {
	return fmt.Sprintf("%.2fx (%s)", r.Estimate, r.bounds(NotDecided, true, true))
}
