package harness

import (
	"slices"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Saturated is the utilisation at which a side counts as a cell's bottleneck: a process that used
// 85% of the cores it was given had little left, on a machine it shares with its peer, the kernel
// and the network stack; its figure says what that side could do, not what the other could.
const Saturated = 0.85

// The values of the "bottleneck" parameter that Result records.
const (
	BottleneckClient  = "client"  // the load generator was saturated and the server was not: the figures are its own
	BottleneckServer  = "server"  // the server was saturated and the client was not
	BottleneckBoth    = "both"    // both were: the server at its capacity, with nothing to spare on the client
	BottleneckNeither = "neither" // neither was: latency-bound (a ping-pong), or starved
	BottleneckShared  = "shared"  // the two shared CPUs, so neither side's share of them can be told
)

// Utilisation is cpu over wall time and cores: the share of its CPU set a side kept busy.
func Utilisation(cpu, wall time.Duration, cores float64) float64 {
	if wall <= 0 || cores <= 0 {
		return 0
	}
	return cpu.Seconds() / (wall.Seconds() * cores)
}

// Bottleneck names the side that set a cell's figures from the two sides' utilisations (medians
// of the repetitions), on CPU sets of their own.
func Bottleneck(client, server float64) string {
	switch {
	case client >= Saturated && server >= Saturated:
		return BottleneckBoth
	case client >= Saturated:
		return BottleneckClient
	case server >= Saturated:
		return BottleneckServer
	}
	return BottleneckNeither
}

// bottleneckOf is Bottleneck over the medians of res's utilisation metrics
// (which Metrics reports only when every repetition knew both sides'
// cores), "shared" if the sides shared CPUs in some repetition, or "" when
// a side's utilisation is unknown (an in-process benchmark, or a server
// whose CPU was not measured).
func bottleneckOf(res *schema.Result, reps []Rep) string {
	client, okc := res.Metric(schema.MetricClientUtilisation)
	server, oks := res.Metric(schema.MetricServerUtilisation)
	switch {
	case !okc || !oks:
		return ""
	case slices.ContainsFunc(reps, func(r Rep) bool { return r.SharedCPUs }):
		return BottleneckShared
	}
	return Bottleneck(client.Median, server.Median)
}

// CPUSetReader is a CPUSource that also knows which CPUs its process may run on.
type CPUSetReader interface {
	CPUSet() (cpuset.Set, error)
}

// CPUSet is the set of CPUs the process may run on now.
func (p *ProcessCPU) CPUSet() (cpuset.Set, error) { return cpuset.OfProcess(p.PID) }

// sideCores are the cores this process (the client, or the parent of an external one started on
// its CPUs) and the server may use, 0 for a side that cannot be told, and whether their CPU sets
// overlap; none without a server process (in-process, the client's CPU time is the server's too).
// A server's cores are its CPU quota where that is below its CPU set: a server held to half a core
// is saturated at half a core.
func (r *Runner) sideCores() (client, server float64, shared bool) {
	if r.Server == nil {
		return 0, 0, false
	}
	clientSet, err := cpuset.Usable()
	if err == nil {
		client = float64(len(clientSet))
	}
	c, ok := r.Server.(CPUSetReader)
	if !ok {
		return client, 0, false
	}
	serverSet, err := c.CPUSet()
	if err != nil {
		return client, 0, false
	}
	for _, cpu := range serverSet {
		shared = shared || slices.Contains(clientSet, cpu)
	}
	server = float64(len(serverSet))
	if g := serverCgroup(r.Server); g != nil && g.Quota() > 0 && g.Quota() < server {
		server = g.Quota()
	}
	return client, server, shared
}
