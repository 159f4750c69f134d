package schema

import (
	"math"
	"slices"
)

// NewMetric builds a metric from its repetitions, computing the summary
// fields so they always agree with Validate. reps is copied.
func NewMetric(name, unit string, better Better, reps []float64) Metric {
	m := Metric{Name: name, Unit: unit, Better: better, Reps: slices.Clone(reps)}
	if len(reps) > 0 {
		m.Min, m.Median, m.Max = summarize(reps)
	}
	return m
}

// Median is the median of a non-empty sample, as a metric's (summarize).
func Median(values []float64) float64 {
	_, m, _ := summarize(values)
	return m
}

// summarize returns the minimum, median and maximum of a non-empty sample.
// The median of an even-sized sample is the mean of the two middle values,
// the usual definition (and benchstat's).
func summarize(reps []float64) (lo, median, hi float64) {
	s := slices.Clone(reps)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		median = s[n/2]
	} else {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return s[0], median, s[n-1]
}

// approxEqual tolerates the rounding a float takes through another tool's
// JSON encoder (e.g. the Lisp client printing fewer digits).
func approxEqual(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// Metric returns the result's metric with the given name.
func (r *Result) Metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}
