package harness

import (
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// conditions are what a repetition reads of the machine just before and
// just after it runs: the host's CPU stall (pressure.go) and steal
// (steal.go), and the counters of the server's own control groups, if it
// runs in any (its throttling by a CPU quota, and its CPU stall).
type conditions struct {
	stall  cpuStall
	steal  stealReading
	server cgroup.Reading
}

// CgroupReader is a server CPUSource whose process runs in control groups
// of its own (serverproc.Spec.Cgroup, .CPUQuota).
type CgroupReader interface {
	Cgroup() *cgroup.Group
}

// serverCgroup is the server's control groups, or nil.
func serverCgroup(server CPUSource) *cgroup.Group {
	if c, ok := server.(CgroupReader); ok {
		return c.Cgroup()
	}
	return nil
}

func (r *Runner) readConditions() conditions {
	c := conditions{stall: readStall(), steal: readSteal()}
	if g := serverCgroup(r.Server); g != nil {
		c.server = g.Read()
	}
	return c
}

// setConditions records in rep what changed between two readings over
// wall.
func (rep *Rep) setConditions(before, after conditions, wall time.Duration) {
	rep.CPUPressure, rep.HasCPUPressure = pressure(before.stall, after.stall, wall)
	rep.CPUSteal, rep.HasCPUSteal = stealShare(before.steal, after.steal, wall, hostCPUs(after.steal))
	rep.SetServerThrottling(before.server, after.server)
	b, a := before.server, after.server
	if b.HasStall && a.HasStall && wall > 0 {
		rep.ServerCPUPressure = float64(a.Stall-b.Stall) / float64(wall)
		rep.HasServerCPUPressure = true
	}
}

// SetServerThrottling records in rep the share of CFS periods in which the
// server's quota throttled it, from readings of its control groups taken
// before and after the repetition, where both read it.
func (rep *Rep) SetServerThrottling(before, after cgroup.Reading) {
	if before.HasThrottling && after.HasThrottling && after.Periods > before.Periods {
		rep.ServerThrottled = float64(after.ThrottledPeriods-before.ThrottledPeriods) / float64(after.Periods-before.Periods)
		rep.HasServerThrottling = true
	}
}

// serverConditionMetrics are the server's throttling and CPU pressure per
// repetition, where every repetition read them.
func serverConditionMetrics(reps []Rep) []schema.Metric {
	throttled := shareMetric(reps, schema.MetricServerThrottled, func(r Rep) (float64, bool) { return r.ServerThrottled, r.HasServerThrottling })
	return append(throttled, shareMetric(reps, schema.MetricServerCPUPressure, func(r Rep) (float64, bool) { return r.ServerCPUPressure, r.HasServerCPUPressure })...)
}
