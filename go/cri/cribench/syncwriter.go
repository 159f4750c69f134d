package main

import (
	"io"
	"os"
	"sync"
)

// syncWriter serializes writes: the server's stderr and stdout copiers and
// the progress lines all write to cri-bench's stderr.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// sharedLog returns w safe for concurrent writers. An *os.File already
// is, and is kept as it is so that a started server inherits it directly.
func sharedLog(w io.Writer) io.Writer {
	if _, ok := w.(*os.File); ok {
		return w
	}
	return &syncWriter{w: w}
}
