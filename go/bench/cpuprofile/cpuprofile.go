// Package cpuprofile writes a CPU profile of the process, for the
// -cpuprofile flag of a benchmark or of a server it measures. It is a
// package of its own so that a server links none of the harness: a
// server's digest is what makes a document's figures current.
package cpuprofile

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
)

// Start starts profiling the process's CPU into path (the
// -cpuprofile flag of a benchmark, or of the server it measures); the
// returned function stops the profile and closes the file. An empty path
// profiles nothing.
func Start(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return errors.Join(f.Sync(), f.Close())
	}, nil
}
