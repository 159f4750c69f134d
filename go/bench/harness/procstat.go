package harness

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
)

// ProcessCPU reads the CPU times of another process, such as the benchmark
// server a suite started, from /proc/<pid>/stat. That file is readable for
// any process of the same user without ptrace rights, unlike getrusage,
// which only covers the caller and its waited-for children.
type ProcessCPU struct {
	PID int
	// group is the process's control groups, if it runs in its own
	// (serverproc.Process.Cgroup): their counters are read around each
	// repetition, and a CPU quota is the cores its utilisation counts.
	group *cgroup.Group
	// fromCgroup says the CPU time comes from the group, to the
	// microsecond, rather than from /proc in clock ticks: decided once, so
	// that the two readings of a repetition never mix the two.
	fromCgroup     bool
	statPath       string
	ticksPerSecond int64
}

// The values of CPUClock: where a server's CPU time was read.
const (
	CPUClockCgroup = "cgroup cpu.stat (µs)"
	CPUClockProc   = "/proc/PID/stat (clock ticks)"
)

// NewProcessCPU returns a CPUSource for the process with the given PID.
func NewProcessCPU(pid int) *ProcessCPU {
	return &ProcessCPU{
		PID:            pid,
		statPath:       fmt.Sprintf("/proc/%d/stat", pid),
		ticksPerSecond: clockTicksPerSecond(),
	}
}

// NewServerCPU is NewProcessCPU for a server in control groups of its own
// (nil: none), whose CPU time is then read from them where they keep it.
func NewServerCPU(pid int, group *cgroup.Group) *ProcessCPU {
	p := NewProcessCPU(pid)
	p.group = group
	if group != nil {
		_, _, p.fromCgroup = group.Usage()
	}
	return p
}

// Cgroup is the control groups of the process, if it was given any.
func (p *ProcessCPU) Cgroup() *cgroup.Group { return p.group }

// CPUClock says where CPU() reads the time: CPUClockCgroup or
// CPUClockProc.
func (p *ProcessCPU) CPUClock() string {
	if p.fromCgroup {
		return CPUClockCgroup
	}
	return CPUClockProc
}

// CPU returns the process's cumulative user and system time (all threads),
// from its cgroup or from /proc (CPUClock).
func (p *ProcessCPU) CPU() (CPUTimes, error) {
	if p.fromCgroup {
		user, system, ok := p.group.Usage()
		if !ok {
			return CPUTimes{}, fmt.Errorf("the CPU time of pid %d's cgroup can no longer be read", p.PID)
		}
		return CPUTimes{User: user, System: system}, nil
	}
	data, err := os.ReadFile(p.statPath)
	if err != nil {
		return CPUTimes{}, err
	}
	t, err := parseProcStat(data, p.ticksPerSecond)
	if err != nil {
		return CPUTimes{}, fmt.Errorf("%s: %w", p.statPath, err)
	}
	return t, nil
}

// parseProcStat extracts utime and stime (fields 14 and 15, in clock ticks)
// from a /proc/<pid>/stat line. Field 2 is the executable name in
// parentheses and may itself contain spaces and parentheses, so the fields
// are counted from the last ')' rather than split from the start.
func parseProcStat(line []byte, ticksPerSecond int64) (CPUTimes, error) {
	end := bytes.LastIndexByte(line, ')')
	if end < 0 {
		return CPUTimes{}, fmt.Errorf("no ')' closing the command name in %q", line)
	}
	// After ") " come field 3 (state), 4, ...; utime is field 14.
	const utimeIndex = 14 - 3
	fields := bytes.Fields(line[end+1:])
	if len(fields) <= utimeIndex+1 {
		return CPUTimes{}, fmt.Errorf("only %d fields after the command name", len(fields))
	}
	user, err := ticksField(fields[utimeIndex], ticksPerSecond)
	if err != nil {
		return CPUTimes{}, fmt.Errorf("utime: %w", err)
	}
	system, err := ticksField(fields[utimeIndex+1], ticksPerSecond)
	if err != nil {
		return CPUTimes{}, fmt.Errorf("stime: %w", err)
	}
	return CPUTimes{User: user, System: system}, nil
}

// ticksField is the field's count of clock ticks as a duration.
func ticksField(field []byte, ticksPerSecond int64) (time.Duration, error) {
	ticks, err := strconv.ParseInt(string(field), 10, 64)
	if err != nil {
		return 0, err
	}
	d, ok := ticksToDuration(ticks, ticksPerSecond)
	if !ok {
		return 0, fmt.Errorf("%d ticks of %d a second is not a CPU time", ticks, ticksPerSecond)
	}
	return d, nil
}

// ticksToDuration is a count of clock ticks as a duration, if it is one:
// the kernel's counters are never negative, and a count that overflows a
// Duration is no measurement.
func ticksToDuration(ticks, ticksPerSecond int64) (time.Duration, bool) {
	if ticks < 0 || ticksPerSecond <= 0 {
		return 0, false
	}
	tick := time.Second / time.Duration(ticksPerSecond)
	if tick > 0 && ticks > math.MaxInt64/int64(tick) {
		return 0, false
	}
	return time.Duration(ticks) * tick, true
}
