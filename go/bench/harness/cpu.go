package harness

import "time"

// CPUTimes is CPU time a process spent in user and kernel mode.
type CPUTimes struct {
	User, System time.Duration
}

// Total is user plus system time: the CPU the process consumed.
func (c CPUTimes) Total() time.Duration { return c.User + c.System }

// Sub returns the CPU time spent between an earlier reading and c.
func (c CPUTimes) Sub(earlier CPUTimes) CPUTimes {
	return CPUTimes{User: c.User - earlier.User, System: c.System - earlier.System}
}

// CPUSource reads a process's cumulative CPU times. The runner reads it
// before and after each repetition.
type CPUSource interface {
	CPU() (CPUTimes, error)
}

// SelfCPU is the CPUSource of the calling process, via getrusage.
type SelfCPU struct{}

func (SelfCPU) CPU() (CPUTimes, error) { return selfCPU() }
