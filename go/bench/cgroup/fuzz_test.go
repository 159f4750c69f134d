package cgroup

import (
	"fmt"
	"testing"
	"time"
)

// FuzzParseStat parses arbitrary cgroup files as cpu.stat and as a PSI
// file, then again with the lines a kernel would write appended. Whatever
// they report is never a negative or wrapped duration; the appended lines, which a stat file's later
// lines override, are read back exactly. The seeds are
// testdata/fuzz/FuzzParseStat (TestFuzzSeeds).
func FuzzParseStat(f *testing.F) {
	f.Fuzz(func(t *testing.T, data string, a, b, c int64) {
		user, system, ok := ParseUsage(data)
		checkDurations(t, ok, user, system)
		_, _, throttled, ok := ParseCPUStat(data)
		checkDurations(t, ok, throttled)
		stall, ok := ParseStall(data)
		checkDurations(t, ok, stall)

		a, b, c = max(a, 0)/1000, max(b, 0)/1000, max(c, 0)/1000
		stat := fmt.Sprintf("%s\nuser_usec %d\nsystem_usec %d\nnr_periods %d\nnr_throttled %d\nthrottled_time %d\n", data, a, b, a, b, c)
		if user, system, ok := ParseUsage(stat); !ok || user != time.Duration(a)*time.Microsecond || system != time.Duration(b)*time.Microsecond {
			t.Fatalf("ParseUsage(%q) = %v, %v, %v; want %dµs, %dµs", stat, user, system, ok, a, b)
		}
		periods, throttledPeriods, throttled, ok := ParseCPUStat(stat)
		if !ok || periods != a || throttledPeriods != b || throttled != time.Duration(c) {
			t.Fatalf("ParseCPUStat(%q) = %d, %d, %v, %v; want %d, %d, %dns", stat, periods, throttledPeriods, throttled, ok, a, b, c)
		}
		psi := fmt.Sprintf("some avg10=0.00 avg60=0.00 avg300=0.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", c)
		if stall, ok := ParseStall(psi); !ok || stall != time.Duration(c)*time.Microsecond {
			t.Fatalf("ParseStall(%q) = %v, %v; want %dµs", psi, stall, ok, c)
		}
	})
}

// checkDurations fails if a parser gave a negative duration: no counter
// is.
func checkDurations(t *testing.T, ok bool, ds ...time.Duration) {
	t.Helper()
	for _, d := range ds {
		if d < 0 {
			t.Fatalf("parsed %v (ok %v)", ds, ok)
		}
	}
}
