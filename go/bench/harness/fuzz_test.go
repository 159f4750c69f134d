package harness

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"
)

// procTicks is clock ticks a second, as Linux reports them to programs.
const procTicks = 100

// FuzzParseProcFiles parses arbitrary bytes as a /proc/PID/stat line and
// as /proc/stat, then lines as the kernel writes them, with any command
// name and counters. What the parsers accept is a whole number of ticks,
// never negative or wrapped; a counter that is no duration is refused; a
// kernel's line is read back exactly. The seeds are
// testdata/fuzz/FuzzParseProcFiles (TestFuzzSeeds).
func FuzzParseProcFiles(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, comm string, utime, stime int64) {
		if c, err := parseProcStat(data, procTicks); err == nil {
			checkTicks(t, c.User, c.System)
		}
		if d, ok := parseSteal(data, procTicks); ok {
			checkTicks(t, d)
		}
		if n, lines := statCPUs(data), countLines(data); n > lines {
			t.Fatalf("statCPUs counted %d CPUs in %d lines", n, lines)
		}

		line := fmt.Sprintf("4242 (%s) S 1 4242 4242 0 -1 4194560 116 0 0 0 %d %d 0 0 20 0 1 0 1802 5885952 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n", comm, utime, stime)
		c, err := parseProcStat([]byte(line), procTicks)
		if valid := validTicks(utime) && validTicks(stime); valid != (err == nil) {
			t.Fatalf("parseProcStat(%q) = %+v, %v", line, c, err)
		}
		if err == nil && (c.User != time.Duration(utime)*10*time.Millisecond || c.System != time.Duration(stime)*10*time.Millisecond) {
			t.Fatalf("parseProcStat(%q) = %+v, want %d and %d ticks", line, c, utime, stime)
		}
		stat := fmt.Sprintf("cpu  10132153 290696 3084719 46828483 16683 0 25195 %d 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n%s", utime, data)
		d, ok := parseSteal([]byte(stat), procTicks)
		if ok != validTicks(utime) || ok && d != time.Duration(utime)*10*time.Millisecond {
			t.Fatalf("parseSteal(%q) = %v, %v; want %d ticks", stat, d, ok, utime)
		}
	})
}

// validTicks reports whether n clock ticks are a duration.
func validTicks(n int64) bool {
	return n >= 0 && n <= math.MaxInt64/int64(time.Second/procTicks)
}

func checkTicks(t *testing.T, ds ...time.Duration) {
	t.Helper()
	for _, d := range ds {
		if d < 0 || d%(time.Second/procTicks) != 0 {
			t.Fatalf("parsed %v, not a whole number of ticks", ds)
		}
	}
}

func countLines(data []byte) int {
	n := 0
	for range bytes.Lines(data) {
		n++
	}
	return n
}
