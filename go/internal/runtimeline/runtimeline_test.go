package runtimeline

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestLineNamesTheRuntimesSettings(t *testing.T) {
	old := debug.SetGCPercent(250)
	defer debug.SetGCPercent(old)
	oldLimit := debug.SetMemoryLimit(64 << 20)
	defer debug.SetMemoryLimit(oldLimit)
	line := Line()
	want := fmt.Sprintf("runtime cpus=%d gomaxprocs=%d numcpu=%d gogc=250 gomemlimit=%d",
		runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0), runtime.NumCPU(), 64<<20)
	if line != want {
		t.Errorf("Line() = %q, want %q", line, want)
	}
	// Collection off, no limit.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(math.MaxInt64)
	if line := Line(); !strings.HasSuffix(line, " gogc=-1 gomemlimit=0") {
		t.Errorf("Line() = %q, want gogc=-1 gomemlimit=0", line)
	}
}
