package mockcri

import "fmt"

// DefaultGCPercent is Go's own GOGC: a collection once the heap has grown
// by as much as was live after the last one.
const DefaultGCPercent = 100

// ValidateGCPercent reports a GOGC value (runtime/debug.SetGCPercent) that
// a benchmark peer should not run with: -1 turns the collector off, 0
// would collect without pause.
func ValidateGCPercent(p int) error {
	if p != -1 && (p < 1 || p > 1_000_000) {
		return fmt.Errorf("gogc must be -1 (off) or between 1 and 1000000, got %d", p)
	}
	return nil
}
