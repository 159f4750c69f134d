package harness

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// goBenchUnits maps harness metrics to the units `go test -bench` prints,
// so benchstat lines them up with ordinary Go benchmarks. They come first
// on each line, in this order, as in `go test` output.
var goBenchUnits = []struct{ metric, unit string }{
	{schema.MetricNsPerOp, "ns/op"},
	{schema.MetricBytesPerOp, "B/op"},
	{schema.MetricAllocsPerOp, "allocs/op"},
}

// WriteBenchfmt writes the successful scenarios of f in the Go benchmark
// format, one line per repetition, so benchstat can compare two runs:
//
//	goos: linux
//	goarch: amd64
//	pkg: github.com/grpcbench/grpcbench/go/routeguide/bench
//	cpu: Intel(R) Xeon(R) CPU @ 2.20GHz
//	BenchmarkRouteguide/unary/clients=10-2  150000  33150 ns/op  1200 B/op  25 allocs/op  30123 req/s ...
//
// The iteration count is the "ops" metric. Failed scenarios are left out:
// the format has no way to say a benchmark failed. The format is read by
// golang.org/x/perf/benchfmt (see the test), which is what benchstat uses.
func WriteBenchfmt(w io.Writer, f *schema.File, pkg string) error {
	var b strings.Builder
	goos, goarch, _ := strings.Cut(f.Environment.Platform, "_")
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\npkg: %s\ncpu: %s\n", goos, goarch, pkg, f.Environment.CPUModel)
	procs := f.Environment.GOMAXPROCS
	if procs == 0 {
		procs = f.Environment.CPUCount
	}
	prefix := "Benchmark" + benchName(f.Suite)
	for _, res := range f.Results {
		if res.Status != schema.StatusOK || len(res.Metrics) == 0 {
			continue
		}
		name := prefix + "/" + res.Scenario
		if procs > 1 { // `go test` omits the suffix when GOMAXPROCS is 1
			name += "-" + strconv.Itoa(procs)
		}
		units := lineUnits(res.Metrics)
		ops, hasOps := res.Metric(schema.MetricOps)
		for rep := range len(res.Metrics[0].Reps) {
			iters := 1
			if hasOps && rep < len(ops.Reps) && ops.Reps[rep] >= 1 {
				iters = int(ops.Reps[rep])
			}
			fmt.Fprintf(&b, "%s\t%8d", name, iters)
			for _, u := range units {
				if rep < len(u.metric.Reps) {
					fmt.Fprintf(&b, "\t%s %s", benchValue(u.metric.Reps[rep]), u.unit)
				}
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// benchValue prints a value as `go test` does: whole numbers for large
// values, about four significant digits for small ones, never an exponent.
func benchValue(x float64) string {
	var format string
	switch y := math.Abs(x); {
	case y == math.Trunc(y) || y >= 999.95: // counts print as integers
		format = "%10.0f"
	case y >= 99.995:
		format = "%12.1f"
	case y >= 9.9995:
		format = "%13.2f"
	case y >= 0.99995:
		format = "%14.3f"
	case y >= 0.099995:
		format = "%15.4f"
	case y >= 0.0099995:
		format = "%16.5f"
	case y >= 0.00099995:
		format = "%17.6f"
	default:
		format = "%18.7f"
	}
	return fmt.Sprintf(format, x)
}

type lineUnit struct {
	metric schema.Metric
	unit   string
}

// lineUnits orders a scenario's metrics for a benchmark line and gives each
// a benchfmt unit: the standard Go units first, then every other metric
// under a unit named after it ("latency-p99-ns", "total-cpu-sec",
// "req/s"). The "ops" metric is the iteration count, not a value.
func lineUnits(metrics []schema.Metric) []lineUnit {
	var out []lineUnit
	taken := map[string]bool{schema.MetricOps: true}
	byName := map[string]schema.Metric{}
	for _, m := range metrics {
		byName[m.Name] = m
	}
	for _, g := range goBenchUnits {
		if m, ok := byName[g.metric]; ok {
			out = append(out, lineUnit{m, g.unit})
			taken[g.metric] = true
		}
	}
	for _, m := range metrics {
		if !taken[m.Name] {
			out = append(out, lineUnit{m, benchUnit(m)})
		}
	}
	return out
}

// benchUnit names a metric's benchfmt unit. Rates keep their unit; other
// metrics are named after the metric with the unit as a suffix, using the
// suffixes benchstat knows how to scale ("ns" and "sec" are times).
func benchUnit(m schema.Metric) string {
	base := strings.ReplaceAll(m.Name, "_", "-")
	switch m.Unit {
	case schema.UnitReqPerSec, schema.UnitMsgPerSec:
		if m.Name == schema.MetricReqPerSec || m.Name == schema.MetricMsgPerSec {
			return m.Unit
		}
		return base + "-" + m.Unit
	case schema.UnitSeconds:
		return base + "-sec"
	case schema.UnitNanoseconds:
		return base + "-ns"
	case schema.UnitNsPerOp:
		return base + "-ns/op"
	case schema.UnitBytesPerOp:
		return base + "-B/op"
	case schema.UnitAllocsPerOp:
		return base + "-allocs/op"
	}
	return base // ratio and count are dimensionless
}

// benchName turns a suite name into a Go benchmark function name:
// "routeguide" -> "Routeguide", "k8s_content-types" -> "K8sContentTypes".
func benchName(suite string) string {
	var b strings.Builder
	upper := true
	for _, r := range suite {
		if r == '_' || r == '-' {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
