package driver

import (
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// Summarize fills r.Summary from the workers' statistics the way gRPC's
// qps_json_driver does, so that a summary from this driver reads the same as
// one on gRPC's dashboard: qps is each client's completed calls over its own
// elapsed time, summed; CPU times are percentages of one core (a client using
// two cores fully shows 200); qps per server core divides by the cores the
// servers reported; latencies come from the merged histogram. A ratio whose
// denominator is zero (a worker that reported no time, or no calls) is
// left at zero rather than made infinite.
func Summarize(r *testpb.ScenarioResult, latencies *Histogram) {
	s := r.Summary
	if s == nil {
		s = &testpb.ScenarioResultSummary{}
		r.Summary = s
	}
	s.Latency_50 = latencies.Percentile(50)
	s.Latency_90 = latencies.Percentile(90)
	s.Latency_95 = latencies.Percentile(95)
	s.Latency_99 = latencies.Percentile(99)
	s.Latency_999 = latencies.Percentile(99.9)

	var qps, clientSys, clientUser, clientCPU float64
	for _, c := range r.ClientStats {
		qps += ratio(c.GetLatencies().GetCount(), c.TimeElapsed)
		clientSys += ratio(c.TimeSystem, c.TimeElapsed)
		clientUser += ratio(c.TimeUser, c.TimeElapsed)
		clientCPU += c.TimeSystem + c.TimeUser
	}
	var serverSys, serverUser, serverCPU, serverTotal, serverIdle float64
	for _, sv := range r.ServerStats {
		serverSys += ratio(sv.TimeSystem, sv.TimeElapsed)
		serverUser += ratio(sv.TimeUser, sv.TimeElapsed)
		serverCPU += sv.TimeSystem + sv.TimeUser
		serverTotal += float64(sv.TotalCpuTime)
		serverIdle += float64(sv.IdleCpuTime)
	}
	s.Qps = qps
	s.ServerSystemTime = 100 * serverSys
	s.ServerUserTime = 100 * serverUser
	s.ClientSystemTime = 100 * clientSys
	s.ClientUserTime = 100 * clientUser
	// The machine-wide CPU use that servers read from /proc/stat; workers
	// that do not report it (grpc-go's) leave it zero, and so does this.
	s.ServerCpuUsage = 0
	if serverTotal != 0 {
		s.ServerCpuUsage = 100 - 100*serverIdle/serverTotal
	}

	if len(r.RequestResults) > 0 {
		var ok, failed float64
		for _, rr := range r.RequestResults {
			if rr.StatusCode == 0 {
				ok += float64(rr.Count)
			} else {
				failed += float64(rr.Count)
			}
		}
		var wall float64
		for _, c := range r.ClientStats {
			wall += c.TimeElapsed
		}
		if n := len(r.ClientStats); n > 0 {
			wall /= float64(n)
		}
		s.SuccessfulRequestsPerSecond = ratio(ok, wall)
		s.FailedRequestsPerSecond = ratio(failed, wall)
	}

	var cores float64
	for _, c := range r.ServerCores {
		cores += float64(c)
	}
	s.QpsPerServerCore = ratio(qps, cores)
	var clientPolls, serverPolls float64
	for _, c := range r.ClientStats {
		clientPolls += float64(c.CqPollCount)
	}
	for _, sv := range r.ServerStats {
		serverPolls += float64(sv.CqPollCount)
	}
	s.ClientPollsPerRequest = ratio(clientPolls, latencies.Count())
	s.ServerPollsPerRequest = ratio(serverPolls, latencies.Count())
	s.ServerQueriesPerCpuSec = ratio(latencies.Count(), serverCPU)
	s.ClientQueriesPerCpuSec = ratio(latencies.Count(), clientCPU)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
