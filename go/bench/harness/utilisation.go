package harness

import (
	"slices"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
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
func Utilisation(cpu, wall time.Duration, cores int) float64 {
	if wall <= 0 || cores <= 0 {
		return 0
	}
	return cpu.Seconds() / (wall.Seconds() * float64(cores))
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

// bottleneckOf is Bottleneck over the medians of reps, or "" when some repetition did not know
// both sides' cores (an in-process benchmark, or a server whose CPU was not measured).
func bottleneckOf(reps []Rep) string {
	if len(reps) == 0 {
		return ""
	}
	client, server := make([]float64, len(reps)), make([]float64, len(reps))
	shared := false
	for i, r := range reps {
		if !r.hasUtilisation() || !r.hasServerUtilisation() {
			return ""
		}
		client[i], server[i] = r.ClientUtilisation(), r.ServerUtilisation()
		shared = shared || r.SharedCPUs
	}
	if shared {
		return BottleneckShared
	}
	return Bottleneck(medianOf(client), medianOf(server))
}

func medianOf(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// CoreSetter is a CPUSource that also knows which CPUs its process may run on.
type CoreSetter interface {
	CPUSet() (cpuset.Set, error)
}

// CPUSet is the set of CPUs the process may run on now.
func (p *ProcessCPU) CPUSet() (cpuset.Set, error) { return cpuset.OfProcess(p.PID) }

// sideCores are the numbers of CPUs this process (the client, or the parent of an external one
// started on its CPUs) and the server may run on, 0 for a side that cannot be told, and whether the
// two sets overlap; none without a server process (in-process, the client's CPU time is the
// server's too).
func (r *Runner) sideCores() (client, server int, shared bool) {
	if r.Server == nil {
		return 0, 0, false
	}
	clientSet, err := cpuset.Usable()
	if err == nil {
		client = len(clientSet)
	}
	c, ok := r.Server.(CoreSetter)
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
	return client, len(serverSet), shared
}
