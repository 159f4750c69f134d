package main

import (
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
)

// measurement is one repetition: what the harness reports for every suite,
// and what gRPC's summary adds.
type measurement struct {
	rep              harness.Rep
	qpsPerServerCore float64
	sample           serverproc.Sample // the server worker after the repetition (RSS 0: not read)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// measure turns a ScenarioResult of one server and one client into a
// repetition. clientCores are the CPUs the client worker was given, quota
// the cap the server worker ran under.
func measure(r *testpb.ScenarioResult, clientCores int, quota cgroup.Quota) measurement {
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
		// Each worker reports its own elapsed time; the harness computes
		// each side's utilisation over its cores and names the bottleneck.
		ClientCores: float64(clientCores),
		ServerCores: float64(r.ServerCores[0]),
		ServerWall:  seconds(ss.TimeElapsed),
		Ops:         ops,
		Msgs:        ops,
		Errors:      failed,
		Latency: harness.Percentiles{
			Count: ops,
			P50:   time.Duration(s.Latency_50), P90: time.Duration(s.Latency_90), P95: time.Duration(s.Latency_95),
			P99: time.Duration(s.Latency_99), P999: time.Duration(s.Latency_999),
			Max: time.Duration(r.Latencies.GetMaxSeen()),
		},
	}
	qpsPerServerCore := s.QpsPerServerCore
	if quota.Capped() && quota.Cores < rep.ServerCores {
		// Its utilisation, and its qps per core, are of the CPU time it
		// may use, not of the CPUs it reports.
		rep.ServerCores = quota.Cores
		qpsPerServerCore = s.Qps / quota.Cores
	}
	return measurement{rep: rep, qpsPerServerCore: qpsPerServerCore}
}

// extraMetrics are the metrics gRPC's summary adds to the harness's, and
// what the server worker held after each repetition where every one was
// read.
func extraMetrics(ms []measurement) []schema.Metric {
	qps := make([]float64, len(ms))
	var samples []serverproc.Sample
	for i, m := range ms {
		qps[i] = m.qpsPerServerCore
		if m.sample.RSS > 0 {
			samples = append(samples, m.sample)
		}
	}
	out := []schema.Metric{schema.NewMetric(schema.MetricQPSPerServerCore, schema.UnitReqPerSec, schema.HigherIsBetter, qps)}
	return append(out, serverproc.SampleMetrics(len(ms), samples, true)...)
}
