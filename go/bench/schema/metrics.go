package schema

// Metric names, in one place for the harness, every suite and the report.
// Results files store them, so keep them stable: renaming one breaks
// comparisons with stored results.
const (
	// What the harness (go/bench/harness) derives from every repetition.
	MetricWallTime  = "wall_time"
	MetricOps       = "ops"
	MetricErrors    = "errors"
	MetricReqPerSec = "req_per_s"
	MetricMsgPerSec = "msg_per_s"
	MetricNsPerOp   = "ns_per_op"
	MetricClientCPU = "client_cpu"
	MetricServerCPU = "server_cpu"
	MetricTotalCPU  = "total_cpu"
	// CPU per operation, client and server apart: on a shared machine the
	// ratio of two servers' req/s mixes in the load generator's cost, and
	// these do not.
	MetricClientCPUPerOp = "client_cpu_per_op"
	MetricServerCPUPerOp = "server_cpu_per_op"
	MetricCPUPerWall     = "cpu_per_wall"
	MetricLatencyP50     = "latency_p50"
	MetricLatencyP90     = "latency_p90"
	MetricLatencyP95     = "latency_p95"
	MetricLatencyP99     = "latency_p99"
	MetricLatencyP999    = "latency_p999"
	MetricLatencyMax     = "latency_max"
	// An open loop's send lag: how late its operations started after they
	// were due, which its latencies include.
	MetricSendLagP50  = "send_lag_p50"
	MetricSendLagP99  = "send_lag_p99"
	MetricSendLagMax  = "send_lag_max"
	MetricBytesPerOp  = "bytes_per_op"
	MetricAllocsPerOp = "allocs_per_op"

	// Suites' own.
	// The started server process's resident set size, and its thread
	// count, after a repetition (of the process started: a wrapper that
	// runs the server as its child would be measured instead of it).
	MetricServerRSS        = "server_rss"
	MetricServerThreads    = "server_threads"
	MetricServerRSSPerConn = "server_rss_per_conn" // that RSS divided by the connections held (connection scale)
	// The growth of the server's anonymous RSS from before the cell's
	// connections opened to once they have settled, before any call, per
	// connection: what one more connection costs, without the starting
	// heap (connection scale).
	MetricServerMarginalRSSPerConn = "server_marginal_rss_per_conn"
	// The connections the server held after a repetition, counted as its
	// open sockets beyond those it had before the cell (connection scale).
	MetricServerConnsHeld   = "server_conns_held"
	MetricCPUPressure       = "cpu_pressure"         // the share of the wall time some task on the host waited for a CPU
	MetricCPUSteal          = "cpu_steal"            // the share of the host's CPU time its hypervisor gave to other guests
	MetricServerThrottled   = "server_throttled"     // the share of CFS periods in which the server's CPU quota held it back
	MetricServerCPUPressure = "server_cpu_pressure"  // the share of the wall time some thread of the server waited for a CPU, or for its quota
	MetricServerBytesPerOp  = "server_bytes_per_op"  // the server's bytes allocated per operation (CRI, from its debug service)
	MetricServerAllocsPerOp = "server_allocs_per_op" // the server's allocations per operation (CRI)
	MetricEncodedBytes      = "encoded_bytes"        // an object's encoded size (Kubernetes content types)
	// gRPC's benchmark protocol (go/qps): qps over the cores the server
	// was given, as gRPC's driver reports it, and each side's CPU time
	// over its wall time and cores, which says which side set the figure.
	MetricQPSPerServerCore  = "qps_per_server_core"
	MetricServerUtilisation = "server_utilisation"
	MetricClientUtilisation = "client_utilisation"
	// The long-poll mix (go/handlercost/loadgen): the long calls held open
	// beside the measured ones, those that completed and those that failed,
	// over the whole cell.
	MetricPolls      = "polls"
	MetricPollErrors = "poll_errors"
)

// The parallelism a started server said at its start that it runs with,
// from its runtime line (go/bench/serverproc): Go's GOMAXPROCS, or the
// CPUs clgrpc counted for its reactors and handler lanes, both the CPU
// affinity lowered to the cgroup's CPU limit (never below 2 for a limit).
// Not environment.extra's server_cpus, the CPU set the harness placed the
// server on.
const MetricServerParallelism = "server_parallelism"

// The heap a started server's last garbage collection left, as the server
// said when asked after a repetition (go/bench/serverproc's heap lines):
// for a Go server the live heap that collection marked
// (/gc/heap/live:bytes), for clgrpc the heap in use right after it, which
// also holds the garbage of the older generations it did not collect. RSS
// shows what the process holds from the system; this, what its heap holds
// after a collection.
const MetricServerLiveHeap = "server_live_heap"
