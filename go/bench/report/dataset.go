package report

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Dataset is the scenarios of one suite, possibly gathered from several
// files (e.g. the Go and the Lisp half of a comparison), in file order.
type Dataset struct {
	Suite        string
	Environments []schema.Environment
	// Measurements are the environments of every file, in file order:
	// Environments keeps one per machine, these one per measurement.
	Measurements []schema.Environment
	Rows         []Row
}

// Row is one scenario.
type Row struct {
	schema.Result
	// Env is the environment of the file the scenario came from (nil when
	// a row was made without one): two rows are related only when their
	// environments allow it (see Incomparable).
	Env *schema.Environment
}

// Param returns a parameter as text, the form tables and grouping use.
// Whole numbers print without a decimal point ("10", not "10.0").
func (r Row) Param(key string) string {
	v, ok := r.Parameters[key]
	if !ok {
		return ""
	}
	return paramString(v)
}

// Value returns the median of a metric, the number tables show.
func (r Row) Value(metric string) (float64, bool) {
	if r.Status != schema.StatusOK {
		return 0, false
	}
	m, ok := r.Metric(metric)
	return m.Median, ok
}

func paramString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

// Values returns the distinct values of a parameter: ascending if each is a
// number (client counts) or each a duration (CPU periods), with "none" (no
// limit: a sweep's uncapped server) after them; else in first-seen order,
// which keeps the order in which the suite ran its scenarios (unary before
// streaming). A sweep that measures its periods in a random order (the
// quota sweep) so renders the same tables every time; names stay in the
// order they ran.
func (d *Dataset) Values(key string) []string {
	var vals []string
	seen := map[string]bool{}
	for _, r := range d.Rows {
		v := r.Param(key)
		if v != "" && !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	sortIfOrdered(vals)
	return vals
}

// noLimit is the value a sweep's parameters take where the server ran
// without the limit they set.
const noLimit = "none"

// sortIfOrdered sorts vals ascending if every one is a number, or every
// one a duration, noLimit allowed among either and put last; otherwise it
// leaves them as they are. Values of one magnitude (1s and 1000ms, from two
// files) are ordered by their text, so no tie keeps the run order.
func sortIfOrdered(vals []string) {
	keys, ok := orderKeys(vals, func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
	if !ok {
		keys, ok = orderKeys(vals, func(v string) (float64, error) {
			d, err := time.ParseDuration(v)
			return float64(d), err
		})
	}
	if !ok {
		return
	}
	slices.SortFunc(vals, func(a, b string) int {
		return cmp.Or(
			cmp.Compare(boolRank(a == noLimit), boolRank(b == noLimit)),
			cmp.Compare(keys[a], keys[b]),
			strings.Compare(a, b))
	})
}

// boolRank orders false before true.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// orderKeys gives each value but noLimit its sort key by parse; false if
// one does not parse.
func orderKeys(vals []string, parse func(string) (float64, error)) (map[string]float64, bool) {
	keys := make(map[string]float64, len(vals))
	for _, v := range vals {
		if v == noLimit {
			continue
		}
		k, err := parse(v)
		if err != nil {
			return nil, false
		}
		keys[v] = k
	}
	return keys, true
}

// Has reports whether any scenario sets the parameter.
func (d *Dataset) Has(key string) bool { return len(d.Values(key)) > 0 }

// Filter returns the scenarios for which keep is true.
func (d *Dataset) Filter(keep func(Row) bool) *Dataset {
	out := &Dataset{Suite: d.Suite, Environments: d.Environments, Measurements: d.Measurements}
	for _, r := range d.Rows {
		if keep(r) {
			out.Rows = append(out.Rows, r)
		}
	}
	return out
}

// Matching returns the scenarios whose parameters equal where's values
// and are among in's.
func (d *Dataset) Matching(where map[string]string, in map[string][]string) *Dataset {
	return d.Filter(func(r Row) bool {
		for k, v := range where {
			if r.Param(k) != v {
				return false
			}
		}
		for k, vs := range in {
			if !slices.Contains(vs, r.Param(k)) {
				return false
			}
		}
		return true
	})
}

// Where returns the scenarios whose parameter key equals value.
func (d *Dataset) Where(key, value string) *Dataset {
	return d.Filter(func(r Row) bool { return r.Param(key) == value })
}

// Find returns the first scenario matching every key=value pair.
func (d *Dataset) Find(match map[string]string) (Row, bool) {
	for _, r := range d.Rows {
		ok := true
		for k, v := range match {
			if r.Param(k) != v {
				ok = false
				break
			}
		}
		if ok {
			return r, true
		}
	}
	return Row{}, false
}

// Group is the scenarios sharing values of some parameters.
type Group struct {
	Label string // "containers=32, annotations=32"; empty for a single group
	Data  *Dataset
}

// GroupBy splits the dataset by the values of keys (parameters no scenario
// of a group sets leave it whole). Groups come in the order of Values. A
// scenario that lacks one of the keys joins every group of that key: a List
// call has no chunk size, and belongs next to each chunk size of Stream.
func (d *Dataset) GroupBy(keys []string) []Group {
	groups := []Group{{Data: d}}
	for _, k := range keys {
		var next []Group
		for _, g := range groups {
			vals := g.Data.Values(k)
			if len(vals) == 0 {
				// Nothing here varies by k (List rows have no chunk size).
				next = append(next, g)
				continue
			}
			for _, v := range vals {
				sub := g.Data.Filter(func(r Row) bool {
					p := r.Param(k)
					return p == v || p == ""
				})
				if !slices.ContainsFunc(sub.Rows, func(r Row) bool { return r.Param(k) == v }) {
					continue
				}
				label := k + "=" + v
				if g.Label != "" {
					label = g.Label + ", " + label
				}
				next = append(next, Group{Label: label, Data: sub})
			}
		}
		groups = next
	}
	return groups
}

// MetricNames returns the metrics of the dataset in first-seen order.
func (d *Dataset) MetricNames() []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range d.Rows {
		for _, m := range r.Metrics {
			if !seen[m.Name] {
				seen[m.Name] = true
				names = append(names, m.Name)
			}
		}
	}
	return names
}

// metricInfo returns the unit and direction of a metric as the first
// scenario that has it records them.
func (d *Dataset) metricInfo(name string) (unit string, better schema.Better, ok bool) {
	for _, r := range d.Rows {
		if m, found := r.Metric(name); found {
			return m.Unit, m.Better, true
		}
	}
	return "", "", false
}

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
