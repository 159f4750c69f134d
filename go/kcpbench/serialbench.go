package main

import (
	"flag"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// schema.MetricEncodedBytes is the size of the encoded object, per format.

// minNsPerOp is the floor below which a figure is not a measurement: no
// encode or decode of a Kubernetes object takes under a nanosecond. A
// benchmark body that does its work once instead of b.N times gives such
// figures (0.0000240 ns/op, docs/prior-results.md); a result under the floor
// is an error here.
const minNsPerOp = 1.0

// setBenchtime sets how long testing.Benchmark runs each case ("200ms", or
// "1000x" for a count). It is the testing package's own -test.benchtime
// flag, registered by testing.Init when this is not a test binary.
func setBenchtime(v string) error {
	if flag.Lookup("test.benchtime") == nil {
		testing.Init()
	}
	if err := flag.Set("test.benchtime", v); err != nil {
		return fmt.Errorf("-ser_benchtime %q: %w", v, err)
	}
	return nil
}

// loopCase is the benchmark body of one case, for testing.Benchmark and for
// `go test -bench`: b.Loop runs the operation as many times as the
// benchmark needs and times only the loop.
func loopCase(c codecCase) func(b *testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Run(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(c.Encoded), "encoded-B")
	}
}

// serialScenario names a case: SerializationCM/encode/json.
func serialScenario(c codecCase) string {
	return c.Object.Benchmark + "/" + c.Op + "/" + formatNames[c.Media]
}

// runSerialization measures every case reps times with testing.Benchmark
// and returns one result per case.
func runSerialization(cases []codecCase, reps int, benchtime string, progress io.Writer) []schema.Result {
	var out []schema.Result
	for _, c := range cases {
		scenario := serialScenario(c)
		params := map[string]any{
			"benchmark": c.Object.Benchmark + "/" + c.Op, "content_type": c.Media, "format": formatNames[c.Media],
			"object": c.Object.Short, "op": c.Op, "benchtime": benchtime, "loop": "b.Loop",
		}
		var ns, cpu, bytesOp, allocs, n []float64
		var failure string
		for range reps {
			r, cpuPerOp := benchmarkWithCPU(c)
			if r.N == 0 {
				failure = "the benchmark did not run (an encode or decode failed)"
				break
			}
			ns = append(ns, float64(r.T.Nanoseconds())/float64(r.N))
			cpu = append(cpu, cpuPerOp)
			bytesOp = append(bytesOp, float64(r.AllocedBytesPerOp()))
			allocs = append(allocs, float64(r.AllocsPerOp()))
			n = append(n, float64(r.N))
		}
		res := schema.Result{Scenario: scenario, Parameters: params, Status: schema.StatusOK}
		if failure == "" {
			res.Metrics = []schema.Metric{
				schema.NewMetric(schema.MetricOps, schema.UnitCount, schema.HigherIsBetter, n),
				schema.NewMetric(schema.MetricNsPerOp, schema.UnitNsPerOp, schema.LowerIsBetter, ns),
				schema.NewMetric(schema.MetricClientCPUPerOp, schema.UnitNsPerOp, schema.LowerIsBetter, cpu),
				schema.NewMetric(schema.MetricBytesPerOp, schema.UnitBytesPerOp, schema.LowerIsBetter, bytesOp),
				schema.NewMetric(schema.MetricAllocsPerOp, schema.UnitAllocsPerOp, schema.LowerIsBetter, allocs),
				schema.NewMetric(schema.MetricEncodedBytes, schema.UnitCount, schema.LowerIsBetter, repeat(float64(c.Encoded), len(ns))),
			}
			if err := checkFloor(ns); err != nil {
				failure = err.Error()
			}
		}
		if failure != "" {
			res.Status, res.Error = schema.StatusError, failure
		}
		if progress != nil {
			fmt.Fprintf(progress, "[kcpbench] %s: %s\n", scenario, summary(res))
		}
		out = append(out, res)
	}
	return out
}

// benchmarkWithCPU runs one repetition of a case under testing.Benchmark,
// and returns with its result the process's CPU time per operation in the
// run that result reports (testing.Benchmark first calls the body with
// smaller counts to size it). Process CPU includes the garbage collector's
// workers, which ns/op of one goroutine does not show.
func benchmarkWithCPU(c codecCase) (testing.BenchmarkResult, float64) {
	body := loopCase(c)
	var spent time.Duration
	var ops int
	r := testing.Benchmark(func(b *testing.B) {
		before, err := harness.SelfCPU{}.CPU()
		body(b)
		after, err2 := harness.SelfCPU{}.CPU()
		if err == nil && err2 == nil {
			spent, ops = after.Sub(before).Total(), b.N
		}
	})
	if ops == 0 || ops != r.N {
		return r, 0
	}
	return r, float64(spent.Nanoseconds()) / float64(ops)
}

// checkFloor rejects a figure below minNsPerOp.
func checkFloor(ns []float64) error {
	for _, v := range ns {
		if v < minNsPerOp {
			return fmt.Errorf("%.4g ns/op is below %g ns/op: the loop did not run the operation", v, minNsPerOp)
		}
	}
	return nil
}

func summary(r schema.Result) string {
	if r.Status != schema.StatusOK {
		return "error: " + r.Error
	}
	for _, m := range r.Metrics {
		if m.Name == schema.MetricNsPerOp {
			return fmt.Sprintf("%.0f ns/op (median of %d)", m.Median, len(m.Reps))
		}
	}
	return "ok"
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}
