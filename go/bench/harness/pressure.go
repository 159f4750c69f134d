package harness

import (
	"os"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
)

// The host's CPU pressure during a repetition (schema.MetricCPUPressure)
// is the share of its wall time in which some runnable task on the host
// waited for a CPU (Linux PSI, "some" line of /proc/pressure/cpu). A
// comparison is only as good as the host it ran on: on a host whose cores
// are taken by other work (pressure near 1) the peers take turns, and a
// stream's overlap of client and server, or a server's spare core, is
// gone. The metric says which kind of host a result came from.

// pressurePath is where Linux reports CPU pressure stall information.
const pressurePath = "/proc/pressure/cpu"

// cpuStall is a reading of the host's stall total, ok false where the
// kernel does not report it.
type cpuStall struct {
	total time.Duration
	ok    bool
}

// readStall reads the host's cumulative CPU stall time (the "some" total).
func readStall() cpuStall {
	data, err := os.ReadFile(pressurePath)
	if err != nil {
		return cpuStall{}
	}
	d, ok := cgroup.ParseStall(string(data))
	return cpuStall{d, ok}
}

// pressure is the share of wall that the host stalled between two
// readings; ok false if either is missing.
func pressure(before, after cpuStall, wall time.Duration) (float64, bool) {
	if !before.ok || !after.ok || wall <= 0 {
		return 0, false
	}
	return float64(after.total-before.total) / float64(wall), true
}
