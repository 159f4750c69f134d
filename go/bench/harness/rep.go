package harness

import "time"

// Rep is what one measured repetition observed.
type Rep struct {
	Wall time.Duration
	// ClientCPU is this process's CPU time during the repetition. For an
	// in-process benchmark it includes the server too.
	ClientCPU CPUTimes
	// ServerCPU is the server process's CPU time, when Runner.Server is set.
	ServerCPU    CPUTimes
	HasServerCPU bool
	// ClientCores and ServerCores are the cores the two sides could use,
	// for their utilisation: the sizes of their CPU sets, or a server's
	// CPU quota where that is less; 0 where unknown. With the server's CPU
	// measured in-process (ClientCPU includes it), ServerCores stays 0.
	ClientCores, ServerCores float64
	// SharedCPUs is true when the two sides' CPU sets overlapped: each
	// side's utilisation is then of CPUs the other also used, and no side
	// can be named the bottleneck.
	SharedCPUs bool
	// ServerWall, if set, is the wall time over which the server measured
	// its own CPU (gRPC's workers each report theirs); else Wall is.
	ServerWall time.Duration

	// Ops counts successful operations, Errors failed ones.
	Ops, Errors int64
	// Msgs is the sum of the messages the successful operations carried.
	Msgs int64
	// FirstError is the message of the earliest failed operation.
	FirstError string

	// AllocBytes and Allocs are heap allocation deltas of this process
	// (runtime.MemStats TotalAlloc and Mallocs) over the repetition, or of
	// an External client's process, which counts bytes but not allocations
	// (AllocsUnmeasured).
	AllocBytes, Allocs uint64
	AllocsUnmeasured   bool

	Latency Percentiles
	// SendLag, in an open loop (HasSendLag), is how late the operations
	// started after they were due (see openloop.go).
	SendLag    Percentiles
	HasSendLag bool

	// CPUPressure is the share of Wall in which some task on the host
	// waited for a CPU (see pressure.go); HasCPUPressure is false where the
	// kernel does not report it.
	CPUPressure    float64
	HasCPUPressure bool
	// CPUSteal is the share of the host's CPU time the hypervisor gave to
	// other guests during Wall (see steal.go); HasCPUSteal is false where
	// the kernel does not report it.
	CPUSteal    float64
	HasCPUSteal bool

	// ServerThrottled is the share of the CFS periods in which a server
	// with a CPU quota was held back by it (HasServerThrottling), and
	// ServerCPUPressure the share of Wall in which some thread of a server
	// in a cgroup of its own waited for a CPU (HasServerCPUPressure).
	ServerThrottled      float64
	HasServerThrottling  bool
	ServerCPUPressure    float64
	HasServerCPUPressure bool
}

// Attempts is the number of operations started: successful plus failed.
func (r Rep) Attempts() int64 { return r.Ops + r.Errors }

// TotalCPU is client plus server CPU time.
func (r Rep) TotalCPU() time.Duration { return r.ClientCPU.Total() + r.ServerCPU.Total() }

// CPUPerWall is TotalCPU over wall time: how many cores the benchmark kept
// busy on average.
func (r Rep) CPUPerWall() float64 { return safeDiv(r.TotalCPU().Seconds(), r.Wall.Seconds()) }

// ClientUtilisation is the client's CPU over Wall and its cores.
func (r Rep) ClientUtilisation() float64 {
	return Utilisation(r.ClientCPU.Total(), r.Wall, r.ClientCores)
}

// ServerUtilisation is the server's CPU over its wall time and its cores.
func (r Rep) ServerUtilisation() float64 {
	wall := r.Wall
	if r.ServerWall > 0 {
		wall = r.ServerWall
	}
	return Utilisation(r.ServerCPU.Total(), wall, r.ServerCores)
}

func (r Rep) hasUtilisation() bool       { return r.ClientCores > 0 }
func (r Rep) hasServerUtilisation() bool { return r.HasServerCPU && r.ServerCores > 0 }

// OpsPerSec is successful operations per second of wall time (req/s).
func (r Rep) OpsPerSec() float64 { return safeDiv(float64(r.Ops), r.Wall.Seconds()) }

// MsgsPerSec is messages per second of wall time.
func (r Rep) MsgsPerSec() float64 { return safeDiv(float64(r.Msgs), r.Wall.Seconds()) }

// NsPerOp is wall time over operations started, as Go benchmarks define it
// (for concurrent workers too, like b.RunParallel).
func (r Rep) NsPerOp() float64 { return safeDiv(float64(r.Wall.Nanoseconds()), float64(r.Attempts())) }

// BytesPerOp and AllocsPerOp divide by operations started: failed
// operations allocate too.
func (r Rep) BytesPerOp() float64  { return safeDiv(float64(r.AllocBytes), float64(r.Attempts())) }
func (r Rep) AllocsPerOp() float64 { return safeDiv(float64(r.Allocs), float64(r.Attempts())) }

// safeDiv returns 0 for an empty repetition rather than NaN or Inf, which
// JSON cannot carry.
func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
