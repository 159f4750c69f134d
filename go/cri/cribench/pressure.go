package main

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// schema.MetricCPUPressure is the share of a repetition's wall time in which some
// runnable task on the host waited for a CPU (Linux PSI, "some" line of
// /proc/pressure/cpu). Streaming beats List on latency only by running
// the client's decoding on one core while the server encodes on another;
// on a host whose cores are taken by other work (pressure near 1) the
// two peers take turns instead, and latency follows total CPU. The metric
// says which kind of host a result came from.

// pressurePath is where Linux reports CPU pressure stall information.
const pressurePath = "/proc/pressure/cpu"

// readCPUStall returns the host's cumulative CPU stall time (the "some"
// total), or false where the kernel does not report it.
func readCPUStall() (time.Duration, bool) {
	data, err := os.ReadFile(pressurePath)
	if err != nil {
		return 0, false
	}
	return parseCPUStall(data)
}

// parseCPUStall reads "some avg10=… total=MICROSECONDS" from PSI output.
func parseCPUStall(data []byte) (time.Duration, bool) {
	for _, line := range bytes.Split(data, []byte("\n")) {
		fields := bytes.Fields(line)
		if len(fields) == 0 || string(fields[0]) != "some" {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := bytes.CutPrefix(f, []byte("total=")); ok {
				us, err := strconv.ParseInt(string(v), 10, 64)
				return time.Duration(us) * time.Microsecond, err == nil
			}
		}
	}
	return 0, false
}

// pressureMetric is cpu_pressure of reps from stall readings taken before
// and after each (stalls[2i], stalls[2i+1]); none if any is missing.
func pressureMetric(reps []harness.Rep, stalls []time.Duration) []schema.Metric {
	if len(reps) == 0 || len(stalls) < 2*len(reps) {
		return nil
	}
	values := make([]float64, len(reps))
	for i, r := range reps {
		if r.Wall > 0 {
			values[i] = float64(stalls[2*i+1]-stalls[2*i]) / float64(r.Wall)
		}
	}
	return []schema.Metric{schema.NewMetric(schema.MetricCPUPressure, schema.UnitRatio, schema.LowerIsBetter, values)}
}
