package main

import (
	"io"
	"sync"
)

// lockedWriter serializes writes to w. The log (stderr) has several
// writers at once: the harness's progress ticker, the copiers of the
// server's output, and the run itself; an *os.File copes with that, but
// any other writer (a test's buffer) need not.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
