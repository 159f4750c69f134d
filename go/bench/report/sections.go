package report

import (
	"math"
	"slices"
	"strconv"

	"golang.org/x/perf/benchmath"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Section renders one part of a suite's report from its dataset.
type Section interface {
	Render(d *Dataset, p *Page)
}

// SectionFunc lets a suite write a section as a plain function.
type SectionFunc func(d *Dataset, p *Page)

func (f SectionFunc) Render(d *Dataset, p *Page) { f(d, p) }

// titled queues a section's title; it appears if the section renders
// anything.
func titled(p *Page, title string) {
	if title != "" {
		p.PendingHeading(3, title)
	}
}

// statement prints a goal's statement, and the operating point it is
// judged at in a paragraph of its own.
func statement(p *Page, text, point string) {
	if text != "" {
		p.Text(text)
	}
	if point != "" {
		p.Text("Operating point: " + point + ".")
	}
}

func groupHeading(p *Page, g Group) {
	if g.Label != "" {
		p.PendingHeading(4, g.Label)
	}
}

func displayName(names map[string]string, v string) string {
	if n, ok := names[v]; ok {
		return n
	}
	return v
}

// variantName names a variant column: its display name, or for a bare
// number the parameter too ("per_chunk=16"), since "16" alone says nothing.
func variantName(names map[string]string, param, v string) string {
	if n, ok := names[v]; ok {
		return n
	}
	if _, err := parseFloat(v); err == nil {
		return param + "=" + v
	}
	return v
}

func viewsOrAll(d *Dataset, views []MetricView) []MetricView {
	if len(views) > 0 {
		return views
	}
	return Metrics(d.MetricNames()...)
}

// columnHeader labels a metric column. The harness labels of per-op and
// rate metrics name their unit already ("ns/op", "Bytes/op", "req/s");
// others get it in parentheses when cells are plain numbers.
func columnHeader(mv MetricView, unit string) string {
	label := mv.label()
	switch unit {
	case schema.UnitNsPerOp, schema.UnitBytesPerOp, schema.UnitAllocsPerOp, schema.UnitReqPerSec, schema.UnitMsgPerSec:
		if _, known := metricLabels[mv.Name]; !known || mv.Label != "" {
			return label + " (" + unit + ")"
		}
	}
	return label
}

// columnCell formats a metric in a column whose header carries the unit:
// plain numbers for per-op values and rates (as `go test` prints them),
// scaled units for times.
func columnCell(r Row, metric, unit string) string {
	if r.Status == schema.StatusError {
		return "error"
	}
	m, ok := r.Metric(metric)
	if !ok {
		return missing
	}
	switch {
	case shareMetrics[metric]:
		return FormatPercent(m.Median) + spread(m)
	case unit == schema.UnitNsPerOp, unit == schema.UnitBytesPerOp, unit == schema.UnitAllocsPerOp,
		unit == schema.UnitReqPerSec, unit == schema.UnitMsgPerSec, unit == schema.UnitCount:
		return FormatNumber(m.Median) + spread(m)
	}
	return FormatValue(m.Median, unit) + spread(m)
}

// totalCell is the sum of a metric's repetitions, for counts (failures)
// that a median would hide when they happen in some repetitions only.
func totalCell(r Row, metric string) string {
	if r.Status == schema.StatusError {
		return "error"
	}
	m, ok := r.Metric(metric)
	if !ok {
		return missing
	}
	return FormatMetric(metric, repsTotal(m), m.Unit)
}

// repsTotal is the sum of a metric's repetitions.
func repsTotal(m schema.Metric) float64 {
	sum := 0.0
	for _, v := range m.Reps {
		sum += v
	}
	return sum
}

// spreadMinReps is how many repetitions a 95% confidence interval of the
// median needs without assuming a distribution (benchstat's rule).
const spreadMinReps = 6

// interval is the spread the report shows around a median: the 95%
// confidence interval of the median with spreadMinReps repetitions or more,
// else the range of the repetitions (min to max). It is what a table's ±
// and a chart's error bar say.
func interval(m schema.Metric) (lo, hi float64) {
	if len(m.Reps) >= spreadMinReps {
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(m.Reps), &compareThresholds), compareConfidence)
		return s.Lo, s.Hi
	}
	return m.Min, m.Max
}

// spread is what a table prints after a median: " ±N%", the larger side
// of its interval (the chart's error bar) as a share of the median; "" for one repetition, or when
// all were equal.
func spread(m schema.Metric) string {
	if len(m.Reps) < 2 || m.Median == 0 {
		return ""
	}
	// The same interval as a chart's error bar, by its larger side.
	lo, hi := interval(m)
	half := max(hi-m.Median, m.Median-lo)
	pct := half / math.Abs(m.Median) * 100
	if pct == 0 {
		return ""
	}
	if pct < 10 {
		return " ±" + strconv.FormatFloat(pct, 'f', 1, 64) + "%"
	}
	return " ±" + strconv.FormatFloat(math.Round(pct), 'f', 0, 64) + "%"
}

// preferredMetrics picks the metrics people read first, in reading order,
// so the default table stays narrow; a dataset with none of them shows all.
func preferredMetrics(d *Dataset) []MetricView {
	have := map[string]bool{}
	for _, n := range d.MetricNames() {
		have[n] = true
	}
	var views []MetricView
	for _, n := range []string{schema.MetricReqPerSec, schema.MetricMsgPerSec, schema.MetricNsPerOp, schema.MetricLatencyP50, schema.MetricLatencyP99, schema.MetricTotalCPU, schema.MetricBytesPerOp, schema.MetricAllocsPerOp, schema.MetricErrors} {
		if have[n] {
			views = append(views, MetricView{Name: n})
		}
	}
	if len(views) == 0 {
		return Metrics(d.MetricNames()...)
	}
	return views
}

// ordered puts the values listed in order first, then the rest as found.
func ordered(values, order []string) []string {
	var out []string
	for _, o := range order {
		for _, v := range values {
			if v == o {
				out = append(out, v)
			}
		}
	}
	for _, v := range values {
		if !slices.Contains(order, v) {
			out = append(out, v)
		}
	}
	return out
}
