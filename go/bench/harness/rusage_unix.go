//go:build unix

package harness

import (
	"syscall"
	"time"
)

// selfCPU reads RUSAGE_SELF: all threads of this process, which for Go is
// every goroutine including the GC's and the network poller's work.
func selfCPU() (CPUTimes, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return CPUTimes{}, err
	}
	return CPUTimes{User: timevalDuration(ru.Utime), System: timevalDuration(ru.Stime)}, nil
}

func timevalDuration(tv syscall.Timeval) time.Duration {
	return time.Duration(tv.Nano())
}
