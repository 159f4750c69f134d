package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Goal checks a speed goal stated as ratios to a baseline configuration and
// says, per configuration and in one closing line, whether the results meet
// it. It puts a goal next to the figures that decide it, so a results file
// is judged the same way every time:
//
//   - CRI: "at 1024 containers, the chunked stream of 16 containers per
//     message reaches at most 0.7x List's latency at no more than List's
//     total CPU" (Config names the one configuration judged);
//   - RouteGuide: "the Lisp server reaches at least 0.5x the Go server's
//     req/s for every RPC kind and client count" (every cell must).
//
// Each limit is decided on the repetitions, not on two medians: the ratio's
// one-sided 95% confidence bound (Hodges-Lehmann, ratio_interval.go) must
// lie on the claimed side of the limit for "met", and its other bound on
// the far side for "not met"; otherwise it is "not decided", which is what
// too few repetitions, or a figure at the bound, give.
type Goal struct {
	Title     string
	Statement string              // the goal in words, printed above the table
	Where     map[string]string   // only scenarios with these parameters count
	In        map[string][]string // and whose parameter is one of these values
	GroupBy   []string            // a baseline per group (e.g. rpc, clients)
	// Vary are the parameters that make a configuration, Vary[0] leading,
	// as in AllConfigurations; Baseline is Vary[0]'s value to compare with.
	Vary     []string
	Baseline string
	Names    map[string]string // display names of Vary[0]'s values
	Limits   []RatioLimit
	Context  []MetricView // shown as measured, e.g. the host's CPU pressure
	// Config, when set, is the one configuration the goal judges, named
	// before measuring by its Vary parameters (e.g. method=chunked,
	// per_chunk=16); other configurations are not shown. Without it, every
	// configuration of every group must meet the goal.
	Config map[string]string
	// Bottleneck, when set, names the parameter in which a suite records
	// what limited each cell ("server", "client", "neither"). A goal about
	// servers' capacity judges a cell only when the servers limited it and
	// its baseline, or when the verdict holds anyway (see markUnjudged): a
	// figure that a saturated client set, or one that no side was pushed
	// to, says nothing about the server. Other cells are shown with their
	// ratios and marked "not judged", with what limited them.
	Bottleneck string
	// Cells, when set, are the cells the goal names in advance, as values
	// of GroupBy parameters ("every RPC kind at 1, 10 and 100 clients"):
	// each combination must be measured, for the baseline and for the
	// configuration judged. One that is not appears as "not measured", and
	// the goal is then at best not decided: it is never met by fewer cells
	// than it names.
	Cells map[string][]string
}

// The Bottleneck parameter's value for a cell whose server alone was
// saturated (go/bench/harness): the only one that shows its capacity.
const bottleneckServer = "server"

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

// decide judges the limit on the repetitions of a configuration (x) and of
// the baseline by the ratio's confidence bounds (ratioInterval), returning
// the verdict and the cell that shows the ratio and the bounds it rests on.
func (l RatioLimit) decide(x, base schema.Metric) (Decision, string) {
	r, err := newRatioInterval(x.Reps, base.Reps, goalAlpha)
	if err != nil {
		return NotDecided, fmt.Sprintf("%.2fx (not decided: %v)", x.Median/base.Median, err)
	}
	verdict := Met
	if l.Max > 0 {
		verdict = verdict.and(r.decide(l.Max, true))
	}
	if l.Min > 0 {
		verdict = verdict.and(r.decide(l.Min, false))
	}
	return verdict, fmt.Sprintf("%.2fx (%s; %s)", r.Estimate, verdict, r.bounds(verdict, l.Max > 0, l.Min > 0))
}

// goalVerdict is one configuration's row: its ratios and its verdict. A
// configuration without a figure (a failed run) does not meet the goal.
type goalVerdict struct {
	group, config string
	cells         []string
	decision      Decision
	why           string // what kept a cell from being judged
	unmeasured    bool   // a cell the goal names that has no figures
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
		for k, vs := range s.In {
			if !slices.Contains(vs, r.Param(k)) {
				return false
			}
		}
		return true
	})
	configs := AllConfigurations{Vary: s.Vary, Order: []string{s.Baseline}, Names: s.Names}
	var rows []goalVerdict
	for _, g := range data.GroupBy(s.GroupBy) {
		cols := configs.columns(g.Data)
		if len(cols) < 2 || cols[0].Row.Param(s.Vary[0]) != s.Baseline {
			continue
		}
		for _, c := range cols[1:] {
			if !s.judges(*c.Row) {
				continue
			}
			v := s.verdict(*cols[0].Row, *c.Row)
			v.group, v.config = g.Label, c.Name
			s.markUnjudged(&v, *cols[0].Row, *c.Row)
			bothOK := cols[0].Row.Status == schema.StatusOK && c.Row.Status == schema.StatusOK
			if why := Incomparable(*cols[0].Row, *c.Row); why != "" && bothOK {
				// No ratio between them either: their difference could be the machine's.
				for i := range s.Limits {
					v.cells[i] = missing
				}
				v.decision, v.why = NotJudged, why
			}
			rows = append(rows, v)
		}
	}
	if len(rows) == 0 {
		// Nothing here is what the goal compares.
		return
	}
	rows = append(rows, s.unmeasured(rows)...)
	titled(p, s.Title)
	if s.Statement != "" {
		p.Text(s.Statement)
	}
	p.Table(s.table(rows))
	p.Text(s.summary(rows))
}

// markUnjudged sets a verdict to NotJudged when Bottleneck says that the
// server did not limit the cell or its baseline, and records why. A verdict
// that holds whatever the bottleneck stays: a failed cell is not met; a
// configuration at its capacity that already misses a bound is not met,
// however much the baseline, short of its own capacity, understates; and a
// baseline at its capacity that a figure understating the configuration
// already meets is met. (So Bottleneck suits limits on a capacity, such as
// qps per server core, where a side short of its bottleneck only shows
// less than it can do.)
func (s Goal) markUnjudged(v *goalVerdict, base, r Row) {
	if s.Bottleneck == "" || base.Status != schema.StatusOK || r.Status != schema.StatusOK {
		return
	}
	b, x := base.Param(s.Bottleneck), r.Param(s.Bottleneck)
	if b == "" || x == "" {
		// Results that predate the parameter, or a side whose CPU set was unknown.
		v.decision = NotJudged
		v.why = "bottleneck not recorded"
		return
	}
	// A server at its capacity: the server alone was saturated. With both
	// sides saturated, the load generator may have held the server back as
	// much as the server held it, so the figure is no capacity.
	atCapacity := func(side string) bool { return side == bottleneckServer }
	switch {
	case atCapacity(b) && atCapacity(x),
		atCapacity(x) && v.decision == NotMet,
		atCapacity(b) && v.decision == Met:
		return
	}
	v.decision = NotJudged
	v.why = fmt.Sprintf("%s: %s-bound, %s: %s-bound", displayName(s.Names, s.Baseline), b, v.config, x)
}

// unmeasured is a row for each cell that Cells names and that has no row
// among those judged: its baseline or its configuration was not measured.
func (s Goal) unmeasured(rows []goalVerdict) []goalVerdict {
	var keys []string
	for _, k := range s.GroupBy {
		if len(s.Cells[k]) > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	config := "—"
	if len(s.Config) > 0 {
		config = displayName(s.Names, s.Config[s.Vary[0]])
	}
	labels := []string{""}
	for _, k := range keys {
		var next []string
		for _, l := range labels {
			for _, v := range s.Cells[k] {
				next = append(next, strings.TrimPrefix(l+", "+k+"="+v, ", "))
			}
		}
		labels = next
	}
	var out []goalVerdict
	for _, label := range labels {
		if slices.ContainsFunc(rows, func(v goalVerdict) bool { return sameCell(v.group, label) }) {
			continue
		}
		v := goalVerdict{group: label, config: config, decision: NotDecided, why: "not measured", unmeasured: true}
		for range len(s.Limits) + len(s.Context) {
			v.cells = append(v.cells, missing)
		}
		out = append(out, v)
	}
	return out
}

// sameCell reports whether a group's label (every GroupBy parameter) names
// the cell of label (the parameters Cells names): each k=v of the cell is
// among the group's.
func sameCell(group, cell string) bool {
	have := strings.Split(group, ", ")
	for _, kv := range strings.Split(cell, ", ") {
		if !slices.Contains(have, kv) {
			return false
		}
	}
	return true
}

// judges reports whether the goal judges a configuration: Config's, or
// every one when Config is not set.
func (s Goal) judges(r Row) bool {
	for k, v := range s.Config {
		if r.Param(k) != v {
			return false
		}
	}
	return true
}

func (s Goal) verdict(base, r Row) goalVerdict {
	v := goalVerdict{decision: Met}
	for _, l := range s.Limits {
		bm, okb := base.Metric(l.Metric)
		xm, okx := r.Metric(l.Metric)
		if base.Status != schema.StatusOK || r.Status != schema.StatusOK {
			v.cells = append(v.cells, missing)
			v.decision = NotMet
			continue
		}
		if !okb || !okx || bm.Median == 0 {
			// Both ran, and the figure was not recorded (a suite leaves out
			// what it could not read): nothing to decide on.
			v.cells = append(v.cells, missing)
			v.decision = v.decision.and(NotDecided)
			v.why = "no " + MetricLabel(l.Metric)
			continue
		}
		d, cell := l.decide(xm, bm)
		v.cells = append(v.cells, cell)
		v.decision = v.decision.and(d)
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
		cell := goalCell(v.decision)
		if v.why != "" {
			cell += " (" + v.why + ")"
		}
		row = append(row, cell)
		t.Rows = append(t.Rows, row)
	}
	return t
}

func goalCell(d Decision) string {
	if d == Met {
		return "**met**"
	}
	return d.String()
}

// summary is the closing line: the limits, the verdict, and the cells that
// miss or are not decided. A goal over N cells is met only when all N were
// judged and met: a cell left unjudged could be the one that misses, so
// with k of N judged the goal reads "not decided (k of N judged)".
func (s Goal) summary(rows []goalVerdict) string {
	limits := make([]string, len(s.Limits))
	for i, l := range s.Limits {
		limits[i] = l.String()
	}
	goal := "of " + displayName(s.Names, s.Baseline) + "'s: " + strings.Join(limits, ", ")
	overall, judged := Met, 0
	byDecision := map[Decision][]string{}
	for _, v := range rows {
		name := strings.TrimPrefix(v.group+": "+v.config, ": ")
		byDecision[v.decision] = append(byDecision[v.decision], name)
		if v.decision == NotJudged {
			continue
		}
		overall = overall.and(v.decision)
		if !v.unmeasured {
			judged++
		}
	}
	headline := "Goal " + overall.String()
	if judged < len(rows) && overall != NotMet {
		overall = NotDecided
		headline = fmt.Sprintf("Goal %s (%d of %d judged)", overall, judged, len(rows))
	}
	line := fmt.Sprintf("**%s** (%s)", headline, goal)
	unjudged := ""
	if names := byDecision[NotJudged]; len(names) > 0 {
		unjudged = fmt.Sprintf(" %d of %d cells not judged (the table says why): %s.",
			len(names), len(rows), strings.Join(names, "; "))
	}
	switch {
	case overall == Met && len(rows) == 1:
		return line + " by " + byDecision[Met][0] + "."
	case overall == Met:
		return fmt.Sprintf("%s in all %d cells.", line, len(rows))
	}
	var parts []string
	for _, d := range []Decision{NotMet, NotDecided} {
		if names := byDecision[d]; len(names) > 0 {
			parts = append(parts, fmt.Sprintf("%s in %d of %d cells: %s", d, len(names), len(rows), strings.Join(names, "; ")))
		}
	}
	if len(parts) == 0 {
		return line + "." + unjudged
	}
	return line + ": " + strings.Join(parts, "; ") + "." + unjudged
}
