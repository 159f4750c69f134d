// Package runtimeline is the line a benchmark's Go server prints after its
// announcement to say what its runtime sized itself to: the parallelism
// (GOMAXPROCS, as the runtime chose it from the CPU affinity and the
// cgroup's quota) and the collector's settings. The load generators record
// it beside the Lisp server's own line (clgrpc's SERVER-RUNTIME-LINE), so
// that a comparison shows each side's parallelism as the server saw it,
// not as the harness meant it.
package runtimeline

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
)

// Line is "runtime cpus=N gomaxprocs=N numcpu=N gogc=N gomemlimit=N":
// cpus is the parallelism the server runs with (GOMAXPROCS), numcpu the
// CPUs its affinity allows, gogc -1 when collection is off, and
// gomemlimit 0 when there is no limit.
func Line() string {
	procs := runtime.GOMAXPROCS(0)
	// SetGCPercent returns the setting it replaces: read it, then put it
	// back at once.
	gogc := debug.SetGCPercent(100)
	debug.SetGCPercent(gogc)
	limit := debug.SetMemoryLimit(-1) // a negative limit only reads it
	if limit == math.MaxInt64 {
		limit = 0
	}
	return fmt.Sprintf("runtime cpus=%d gomaxprocs=%d numcpu=%d gogc=%d gomemlimit=%d",
		procs, procs, runtime.NumCPU(), gogc, limit)
}
