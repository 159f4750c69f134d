// Package leakcheck fails a test that leaves goroutines behind.
package leakcheck

import (
	"runtime"
	"testing"
	"time"
)

// Check records the number of goroutines now and fails t if, at its end,
// more are running. Goroutines of a finished RPC may take a moment to exit,
// so the check waits for the count to come back, up to a bound: a slow
// machine can only make it wait longer, never fail a correct test. Tests
// that use it must not run in parallel with others.
func Check(t testing.TB) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		after := runtime.NumGoroutine()
		for after > before && time.Now().Before(deadline) {
			runtime.GC() // runs the cleanups of abandoned streams
			time.Sleep(10 * time.Millisecond)
			after = runtime.NumGoroutine()
		}
		if after > before {
			buf := make([]byte, 1<<20)
			t.Errorf("%d goroutines leaked:\n%s", after-before, buf[:runtime.Stack(buf, true)])
		}
	})
}
