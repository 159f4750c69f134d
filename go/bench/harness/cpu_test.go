package harness

import (
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A process may name itself anything, including "my (weird) proc": the
// parser must count fields from the last parenthesis.
func TestParseProcStatWithParenthesesInName(t *testing.T) {
	line, err := os.ReadFile("testdata/proc_stat_weird_name.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseProcStat(line, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := CPUTimes{User: 12340 * time.Millisecond, System: 5670 * time.Millisecond}
	if got != want {
		t.Errorf("parseProcStat = %+v, want %+v", got, want)
	}
	if got, _ := parseProcStat(line, 250); got.User != 1234*4*time.Millisecond {
		t.Errorf("with 250 ticks/s, user = %v, want 4.936s", got.User)
	}
}

func TestParseProcStatRejectsMalformedLines(t *testing.T) {
	for _, line := range []string{
		"",
		"4242 no-parens S 1",
		"4242 (short) S 1 2 3",
		"4242 (x) S 1 1 1 0 -1 0 0 0 0 0 notanumber 5 0 0",
		"4242 (x) S 1 1 1 0 -1 0 0 0 0 0 -1 5 0 0",
		"4242 (x) S 1 1 1 0 -1 0 0 0 0 0 5 922337203685477581 0 0", // overflows a Duration
	} {
		if _, err := parseProcStat([]byte(line), 100); err == nil {
			t.Errorf("parseProcStat(%q) succeeded", line)
		}
	}
}

func TestAuxvValue(t *testing.T) {
	word := strconv.IntSize / 8
	var auxv []byte
	put := func(v uint64) {
		b := make([]byte, word)
		if word == 8 {
			binary.NativeEndian.PutUint64(b, v)
		} else {
			binary.NativeEndian.PutUint32(b, uint32(v))
		}
		auxv = append(auxv, b...)
	}
	for _, pair := range [][2]uint64{{6, 4096}, {17, 250}, {0, 0}, {17, 999}} {
		put(pair[0])
		put(pair[1])
	}
	if got := auxvValue(auxv, 17); got != 250 {
		t.Errorf("auxvValue(AT_CLKTCK) = %d, want 250", got)
	}
	if got := auxvValue(auxv, 99); got != 0 {
		t.Errorf("auxvValue(absent) = %d, want 0 (and no read past AT_NULL)", got)
	}
}

// burnCPU spins until the process has used at least d more CPU, as
// getrusage sees it. It is bounded by a wall-clock limit so a broken
// counter fails the test instead of hanging it.
func burnCPU(t *testing.T, d time.Duration) {
	t.Helper()
	start, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	limit := time.Now().Add(30 * time.Second)
	x := 1.0
	for time.Now().Before(limit) {
		for range 100000 {
			x = x*1.0000001 + 1e-9
		}
		now, err := selfCPU()
		if err != nil {
			t.Fatal(err)
		}
		if now.Sub(start).Total() >= d {
			sink = x
			return
		}
	}
	t.Fatalf("getrusage did not grow by %v within 30s of spinning", d)
}

var sink any

func TestSelfCPUGrowsWhenBurning(t *testing.T) {
	before, err := SelfCPU{}.CPU()
	if err != nil {
		t.Fatal(err)
	}
	burnCPU(t, 50*time.Millisecond)
	after, err := SelfCPU{}.CPU()
	if err != nil {
		t.Fatal(err)
	}
	if after.User <= before.User {
		t.Errorf("user time did not grow: %v -> %v", before.User, after.User)
	}
	if after.Sub(before).Total() < 50*time.Millisecond {
		t.Errorf("CPU grew by %v, want at least the 50ms burnt", after.Sub(before).Total())
	}
}

// ProcessCPU of our own PID must see the CPU we burn, which checks the
// /proc path, the field positions and the clock tick together.
func TestProcessCPUOfCurrentProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/stat is Linux-only")
	}
	if hz := clockTicksPerSecond(); hz <= 0 {
		t.Fatalf("clock ticks per second = %d", hz)
	}
	p := NewProcessCPU(os.Getpid())
	before, err := p.CPU()
	if err != nil {
		t.Fatal(err)
	}
	burnCPU(t, 100*time.Millisecond)
	after, err := p.CPU()
	if err != nil {
		t.Fatal(err)
	}
	if grown := after.Sub(before).Total(); grown <= 0 {
		t.Errorf("/proc/self/stat CPU did not grow after burning 100ms: %v -> %v", before, after)
	}
	if strings.Contains(p.statPath, "self") {
		t.Errorf("statPath %q should name the PID", p.statPath)
	}
}

func TestProcessCPUOfMissingProcess(t *testing.T) {
	if _, err := NewProcessCPU(1 << 30).CPU(); err == nil {
		t.Error("reading a nonexistent PID succeeded")
	}
}
