package runtimeline

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestLineNamesTheRuntimesSettings(t *testing.T) {
	old := debug.SetGCPercent(250)
	defer debug.SetGCPercent(old)
	line := Line()
	want := fmt.Sprintf("runtime cpus=%d gomaxprocs=%d ", runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0))
	if !strings.HasPrefix(line, want) || !strings.Contains(line, " gogc=250 ") || !strings.HasSuffix(line, " gomemlimit=0") {
		t.Errorf("Line() = %q", line)
	}
	if got := debug.SetGCPercent(old); got != 250 {
		t.Errorf("Line changed GOGC to %d", got)
	}
}
