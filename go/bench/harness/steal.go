package harness

import (
	"bytes"
	"os"
	"runtime"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// The host's CPU steal during a repetition (schema.MetricCPUSteal) is the
// share of its CPUs' time that the hypervisor gave to other guests while
// this one had work: the "steal" column of /proc/stat, over the wall time
// and the CPUs. CPU pressure cannot show it (a stolen CPU looks busy to the
// guest, not contended), yet it slows both sides of a measurement, and
// differently from one repetition to the next.

// statPath is where Linux reports its CPUs' cumulative times.
const statPath = "/proc/stat"

// parseSteal reads the steal time of the "cpu" line (all CPUs) of
// /proc/stat: its eighth field, in clock ticks.
func parseSteal(data []byte, ticksPerSecond int64) (time.Duration, bool) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := bytes.Fields(line)
	if len(fields) < 9 || string(fields[0]) != "cpu" {
		return 0, false
	}
	d, err := ticksField(fields[8], ticksPerSecond)
	return d, err == nil
}

// statCPUs counts the "cpuN" lines of /proc/stat: the CPUs its "cpu" line
// adds up (every online CPU of the host, whatever this process's affinity
// or its container's cpuset).
func statCPUs(data []byte) int {
	n := 0
	for line := range bytes.Lines(data) {
		if len(line) > 3 && bytes.HasPrefix(line, []byte("cpu")) && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	return n
}

// stealReading is the host's cumulative steal, and the CPUs it is summed
// over; ok false where the kernel does not report it.
type stealReading struct {
	total time.Duration
	ok    bool
	cpus  int
}

// readSteal reads the host's cumulative steal time.
func readSteal() stealReading {
	data, err := os.ReadFile(statPath)
	if err != nil {
		return stealReading{}
	}
	d, ok := parseSteal(data, clockTicksPerSecond())
	return stealReading{d, ok, statCPUs(data)}
}

// stealShare is the share of the host's CPU time stolen between two
// readings, over wall and cpus; ok false if either is missing.
func stealShare(before, after stealReading, wall time.Duration, cpus int) (float64, bool) {
	if !before.ok || !after.ok || wall <= 0 || cpus <= 0 {
		return 0, false
	}
	return float64(after.total-before.total) / float64(wall) / float64(cpus), true
}

// hostCPUs is the number of CPUs /proc/stat's "cpu" line adds up, as the
// reading counted them: not runtime.NumCPU, which is this process's
// affinity at start (a pinned or containerised benchmark would divide the
// whole host's steal by a few CPUs).
func hostCPUs(r stealReading) int {
	if r.cpus > 0 {
		return r.cpus
	}
	return runtime.NumCPU()
}

// stealMetric is the host's CPU steal per repetition, if every one could
// read it.
func stealMetric(reps []Rep) []schema.Metric {
	return shareMetric(reps, schema.MetricCPUSteal, func(r Rep) (float64, bool) { return r.CPUSteal, r.HasCPUSteal })
}
