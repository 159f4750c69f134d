package schema

// Units a metric may use. The set is closed so that reports can format and
// convert values reliably; add a unit here (and to results.schema.json) before
// a suite uses it.
const (
	UnitSeconds     = "s"         // durations measured once per repetition: wall time, CPU time
	UnitNanoseconds = "ns"        // per-operation latencies (percentiles)
	UnitNsPerOp     = "ns/op"     // wall time divided by operations, as Go benchmarks report it
	UnitReqPerSec   = "req/s"     // completed operations per second of wall time
	UnitMsgPerSec   = "msg/s"     // messages carried per second (streaming RPCs)
	UnitBytesPerOp  = "B/op"      // heap bytes allocated per operation
	UnitAllocsPerOp = "allocs/op" // heap allocations per operation
	UnitRatio       = "ratio"     // dimensionless, e.g. CPU time / wall time
	UnitCount       = "count"     // plain counts: operations, errors
	UnitBytes       = "B"         // memory sizes: resident set size, per connection
)

var knownUnits = map[string]bool{
	UnitSeconds:     true,
	UnitNanoseconds: true,
	UnitNsPerOp:     true,
	UnitReqPerSec:   true,
	UnitMsgPerSec:   true,
	UnitBytesPerOp:  true,
	UnitAllocsPerOp: true,
	UnitRatio:       true,
	UnitCount:       true,
	UnitBytes:       true,
}

// KnownUnit reports whether unit is one of the units above.
func KnownUnit(unit string) bool { return knownUnits[unit] }
