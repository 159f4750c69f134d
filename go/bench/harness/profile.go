package harness

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// StartCPUProfile starts profiling the process's CPU into path (the
// -cpuprofile flag of a benchmark, or of the server it measures); the
// returned function stops the profile and closes the file. An empty path
// profiles nothing.
func StartCPUProfile(path string) (stop func() error, err error) {
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
		return f.Close()
	}, nil
}
