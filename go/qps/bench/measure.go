package main

import (
	"math"
	"slices"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// saturated is the utilisation at which a side counts as the bottleneck:
// a process using 90% of the cores it was given is as busy as it gets on a
// shared machine.
const saturated = 0.9

// measurement is one repetition: what the harness reports for every suite,
// and what gRPC's summary adds.
type measurement struct {
	rep                                  harness.Rep
	qpsPerServerCore                     float64
	serverUtilisation, clientUtilisation float64
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// measure turns a ScenarioResult of one server and one client into a
// repetition. clientCores are the CPUs the client worker was given.
func measure(r *testpb.ScenarioResult, clientCores int) measurement {
	cs, ss := r.ClientStats[0], r.ServerStats[0]
	s := r.Summary
	var failed int64
	for _, rr := range r.RequestResults {
		if rr.StatusCode != 0 {
			failed += rr.Count
		}
	}
	ops := int64(r.Latencies.GetCount())
	rep := harness.Rep{
		Wall:         seconds(cs.TimeElapsed),
		ClientCPU:    harness.CPUTimes{User: seconds(cs.TimeUser), System: seconds(cs.TimeSystem)},
		ServerCPU:    harness.CPUTimes{User: seconds(ss.TimeUser), System: seconds(ss.TimeSystem)},
		HasServerCPU: true,
		Ops:          ops,
		Msgs:         ops,
		Errors:       failed,
		Latency: harness.Percentiles{
			Count: ops,
			P50:   time.Duration(s.Latency_50), P90: time.Duration(s.Latency_90), P95: time.Duration(s.Latency_95),
			P99: time.Duration(s.Latency_99), P999: time.Duration(s.Latency_999),
			Max: time.Duration(r.Latencies.GetMaxSeen()),
		},
	}
	return measurement{
		rep:               rep,
		qpsPerServerCore:  s.QpsPerServerCore,
		serverUtilisation: utilisation(ss.TimeUser+ss.TimeSystem, ss.TimeElapsed, int(r.ServerCores[0])),
		clientUtilisation: utilisation(cs.TimeUser+cs.TimeSystem, cs.TimeElapsed, clientCores),
	}
}

func utilisation(cpu, wall float64, cores int) float64 {
	if wall <= 0 || cores <= 0 {
		return 0
	}
	return cpu / (wall * float64(cores))
}

// extraMetrics are the metrics gRPC's summary adds to the harness's.
func extraMetrics(ms []measurement) []schema.Metric {
	pick := func(f func(measurement) float64) []float64 {
		out := make([]float64, len(ms))
		for i, m := range ms {
			out[i] = f(m)
		}
		return out
	}
	return []schema.Metric{
		schema.NewMetric(schema.MetricQPSPerServerCore, schema.UnitReqPerSec, schema.HigherIsBetter,
			pick(func(m measurement) float64 { return m.qpsPerServerCore })),
		schema.NewMetric(schema.MetricServerUtilisation, schema.UnitRatio, schema.LowerIsBetter,
			pick(func(m measurement) float64 { return m.serverUtilisation })),
		schema.NewMetric(schema.MetricClientUtilisation, schema.UnitRatio, schema.LowerIsBetter,
			pick(func(m measurement) float64 { return m.clientUtilisation })),
	}
}

// bottleneck names the side that set a cell's figures, from the medians of
// its repetitions: the client when it was saturated (whatever the server
// did, the figure is the client's), else the server when it was, else
// neither (a ping-pong's latency, or a side starved by the machine).
func bottleneck(ms []measurement) string {
	client := median(ms, func(m measurement) float64 { return m.clientUtilisation })
	server := median(ms, func(m measurement) float64 { return m.serverUtilisation })
	switch {
	case client >= saturated:
		return "client"
	case server >= saturated:
		return "server"
	}
	return "neither"
}

func median(ms []measurement, f func(measurement) float64) float64 {
	if len(ms) == 0 {
		return math.NaN()
	}
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
