// Package runtimeline is the line a benchmark's Go server prints after its
// announcement to say what its runtime sized itself to: the parallelism
// (GOMAXPROCS, as the runtime chose it from the CPU affinity and, since Go
// 1.25, the cgroup's CPU limit) and the collector's settings. The load
// generators record it beside the Lisp server's own line (clgrpc's
// SERVER-RUNTIME-LINE), so that a comparison shows each side's parallelism
// as the server saw it, not as the harness meant it.
package runtimeline

import (
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
)

// Line is "runtime cpus=N gomaxprocs=N numcpu=N gogc=N gomemlimit=N":
// cpus is the parallelism the server runs with (GOMAXPROCS), numcpu the
// CPUs its affinity allows, gogc -1 when collection is off, and
// gomemlimit 0 when there is no limit. Read from runtime/metrics, which
// changes nothing (debug.SetGCPercent would commit the pacer to read it).
func Line() string {
	samples := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(samples)
	gogc := int64(int32(samples[0].Value.Uint64())) // -1 (off) is stored as its two's complement
	limit := samples[1].Value.Uint64()
	if limit == math.MaxInt64 {
		limit = 0
	}
	procs := runtime.GOMAXPROCS(0)
	return fmt.Sprintf("runtime cpus=%d gomaxprocs=%d numcpu=%d gogc=%d gomemlimit=%d",
		procs, procs, runtime.NumCPU(), gogc, limit)
}
