package report

import (
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
// too few repetitions, or a figure at the bound, give. Several cells, or
// limits, that each seem not met make the goal not met only when they stay
// so after Holm's correction for their number (goal_holm.go).
type Goal struct {
	Title     string
	Statement string // the goal in words, printed above the table
	// Point names the operating point the goal is judged at (the load,
	// the connections, the CPUs each side has, the handlers), printed
	// after the statement: a verdict reaches no further than it.
	Point   string
	Where   map[string]string   // only scenarios with these parameters count
	In      map[string][]string // and whose parameter is one of these values
	GroupBy []string            // a baseline per group (e.g. rpc, clients)
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
	// what limited each cell ("server", "client", "both", "neither"), and
	// makes the goal one about servers under load (goal_bottleneck.go): a
	// limit on a capacity is judged only where the servers alone limited
	// the cell and its baseline, or where the verdict holds anyway, and
	// over the headroom the servers had left (goal_headroom.go); a limit
	// on latency only in an open loop below both servers' capacity. Other
	// cells are shown with their ratios and what kept them from a verdict.
	Bottleneck string
	// Cells, when set, are the cells the goal names in advance, as values
	// of GroupBy parameters ("every RPC kind at 1, 10 and 100 clients"):
	// each combination must be measured, for the baseline and for the
	// configuration judged. One that is not appears as "not measured", and
	// the goal is then at best not decided: it is never met by fewer cells
	// than it names.
	Cells map[string][]string
}

// goalVerdict is one configuration's row: a verdict per limit, the context
// cells, and the row's verdict. A configuration without a figure (a failed
// run) does not meet the goal.
type goalVerdict struct {
	group, config string
	limits        []limitVerdict
	context       []string
	decision      Decision
	why           string  // what kept the row from a verdict
	unmeasured    bool    // a cell the goal names that has no figures
	memory        float64 // server RSS over the baseline's, beside CPU limits (goal_memory.go)
}

// decide combines the verdicts of the row's limits: not met when one is;
// else not judged when one is (the cell is then no evidence either way);
// else met only when all are. Each limit's reason joins the row's.
func (v *goalVerdict) decide() {
	v.decision = Met
	unjudged := false
	var whys []string
	for _, l := range v.limits {
		if l.why != "" && !slices.Contains(whys, l.why) {
			whys = append(whys, l.why)
		}
		if l.decision == NotJudged {
			unjudged = true
			continue
		}
		v.decision = v.decision.and(l.decision)
	}
	if unjudged && v.decision != NotMet {
		v.decision = NotJudged
	}
	if v.why == "" {
		v.why = strings.Join(whys, "; ")
	}
}

func (s Goal) Render(d *Dataset, p *Page) {
	if len(s.Vary) == 0 || len(s.Limits) == 0 {
		return
	}
	data := d.Matching(s.Where, s.In)
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
			rows = append(rows, v)
		}
	}
	if len(rows) == 0 && len(data.Rows) == 0 {
		// Nothing here is what the goal compares.
		return
	}
	holm(rows)
	for i := range rows {
		rows[i].decide()
	}
	rows = append(rows, s.unmeasured(rows)...)
	titled(p, s.Title)
	statement(p, s.Statement, s.Point)
	if len(rows) == 0 {
		// Its suite was measured, but not the pair the goal judges: said,
		// not left out, so that a missing server cannot hide a goal.
		p.Text(s.notMeasured())
		return
	}
	p.Table(s.table(rows))
	p.Text(s.summary(rows) + s.memoryNote(rows))
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

// verdict judges one configuration against its baseline, limit by limit.
func (s Goal) verdict(base, r Row) goalVerdict {
	v := goalVerdict{memory: s.memoryRatio(base, r)}
	bothOK := base.Status == schema.StatusOK && r.Status == schema.StatusOK
	for _, l := range s.Limits {
		v.limits = append(v.limits, s.judgeLimit(l, base, r, bothOK))
	}
	for _, mv := range s.Context {
		cell := missing
		if m, ok := r.Metric(mv.Name); ok {
			cell = FormatMetric(mv.Name, m.Median, m.Unit)
		}
		v.context = append(v.context, cell)
	}
	why := Incomparable(base, r)
	if why == "" {
		why = unequalParallelism(base, r)
	}
	if why != "" && bothOK {
		// No ratio between them either: their difference could be the
		// machine's, or the runtimes'. Nor a memory ratio.
		v.memory = 0
		for i := range v.limits {
			v.limits[i] = limitVerdict{decision: NotJudged}
		}
		v.why = why
		return v
	}
	if s.Bottleneck != "" && bothOK {
		s.applyBottleneck(&v, base, r)
	}
	return v
}

// judgeLimit decides one limit on one cell, before the bottleneck's rules.
func (s Goal) judgeLimit(l RatioLimit, base, r Row, bothOK bool) limitVerdict {
	if !bothOK {
		// A failed run misses the goal for certain.
		return limitVerdict{decision: NotMet, tested: true, pNotMet: 0}
	}
	bm, okb := base.Metric(l.Metric)
	xm, okx := r.Metric(l.Metric)
	if !okb || !okx || bm.Median == 0 {
		// Both ran, and the figure was not recorded (a suite leaves out
		// what it could not read): nothing to decide on.
		return limitVerdict{decision: NotDecided, why: "no " + MetricLabel(l.Metric)}
	}
	room, why := s.headroom(l, base, r)
	v := l.decide(xm, bm, room, pairedByRound(base, r, bm, xm))
	if why != "" {
		// The ratio is shown; without the servers' headroom it bounds nothing.
		v.decision, v.why, v.tested = NotDecided, why, false
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
	_, _, memory := memoryRange(rows)
	if memory {
		t.Header = append(t.Header, "Server RSS / "+baseline)
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
		for _, l := range v.limits {
			row = append(row, l.cell())
		}
		if memory {
			row = append(row, v.memoryCell())
		}
		row = append(row, v.context...)
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

// pairedByRound reports whether two cells' repetitions pair by index: one
// file that says its servers took turns a round at a time, and as many
// repetitions on each side, at least minPairedRounds of them.
func pairedByRound(base, r Row, bm, xm schema.Metric) bool {
	return base.Env != nil && base.Env == r.Env && base.Env.Extra[schema.ExtraRepsPaired] == schema.PairedByRound &&
		len(bm.Reps) == len(xm.Reps) && len(bm.Reps) >= minPairedRounds
}

// minPairedRounds is the fewest rounds a paired ratio is taken from. With
// fewer, the signed-rank test has no 95% bound at all (its smallest
// one-sided p is 1/16 at four rounds), while the two cells' repetitions,
// unpaired, have one from three a side: the unpaired bound is then the
// only one there is.
const minPairedRounds = 5
