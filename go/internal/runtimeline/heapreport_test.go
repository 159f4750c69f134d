package runtimeline

import (
	"context"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A server that serves heap reports answers each SIGWINCH with one line
// naming its live heap, and stops answering (and handling the signal) once
// its context is done.
func TestHeapReportsAnswerSIGWINCH(t *testing.T) {
	runtime.GC() // a collection, so that the live heap is not 0
	r, w := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	CatchHeapReports().Serve(ctx, w)
	lines := make(chan string, 4)
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := r.Read(buf)
			if err != nil {
				close(lines)
				return
			}
			lines <- string(buf[:n])
		}
	}()
	heapLine := regexp.MustCompile(`^heap live=([0-9]+)\n$`)
	for i := range 2 {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGWINCH); err != nil {
			t.Fatal(err)
		}
		select {
		case line := <-lines:
			m := heapLine.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("report %d: %q, want heap live=N", i, line)
			}
			if n, _ := strconv.ParseUint(m[1], 10, 64); n == 0 {
				t.Errorf("report %d: live heap 0 after a collection", i)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no heap line %d within 10 s", i)
		}
	}
	cancel()
	w.Close()
}
