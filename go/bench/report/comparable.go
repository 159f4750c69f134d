package report

import (
	"fmt"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// ComparisonWindow is how far apart in time two results may have been
// measured for the report to relate them. A cached result is the first
// measurement of its inputs, possibly from long ago, and one machine's
// figures drift over an afternoon (a co-tenant of a virtual machine, a
// warmer room): results measured in turns within one action are always
// related, others only within this window.
const ComparisonWindow = 30 * time.Minute

// Incomparable says why rows a and b must not be related by a ratio or a
// goal, or "" when they may: measured in one file; or on one host (the
// host key the benchmark rules record, or, for files without one, the same
// CPU model, CPU count, memory and kernel) within ComparisonWindow of each
// other.
func Incomparable(a, b Row) string {
	if a.Env == nil || b.Env == nil || a.Env == b.Env {
		return ""
	}
	if !sameHost(*a.Env, *b.Env) {
		return "measured on different hosts"
	}
	ta, erra := time.Parse(time.RFC3339, a.Env.MeasuredAt)
	tb, errb := time.Parse(time.RFC3339, b.Env.MeasuredAt)
	if erra != nil || errb != nil {
		return "" // files from before the time was recorded
	}
	if apart := ta.Sub(tb).Abs(); apart > ComparisonWindow {
		return fmt.Sprintf("measured %s apart, over %s", formatApart(apart), formatApart(ComparisonWindow))
	}
	return ""
}

func sameHost(a, b schema.Environment) bool {
	known := func(h string) bool { return h != "" && h != "unknown" }
	if known(a.Host) && known(b.Host) {
		return a.Host == b.Host
	}
	return a.CPUModel == b.CPUModel && a.CPUCount == b.CPUCount && a.MemoryBytes == b.MemoryBytes &&
		a.Kernel == b.Kernel
}

// formatApart is a duration in its largest whole units: "45 min", "3 h", "2 d".
func formatApart(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d d", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d h", int(d/time.Hour))
	case d >= time.Minute:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	}
	return fmt.Sprintf("%d s", int(d/time.Second))
}
