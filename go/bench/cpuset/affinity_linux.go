package cpuset

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// mask is a kernel CPU mask (cpu_set_t) for up to 1024 CPUs.
type mask [1024 / 64]uint64

func (s Set) mask() (*mask, error) {
	var m mask
	for _, c := range s {
		if c >= len(m)*64 {
			return nil, fmt.Errorf("CPU %d is beyond the %d this supports", c, len(m)*64)
		}
		m[c/64] |= 1 << (c % 64)
	}
	return &m, nil
}

func setAffinity(tid int, m *mask) error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	if errno != 0 {
		return errno
	}
	return nil
}

func getAffinity(tid int) (*mask, error) {
	var m mask
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, uintptr(tid), unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	if errno != 0 {
		return nil, errno
	}
	return &m, nil
}

func (m *mask) set() Set {
	var s Set
	for i, word := range m {
		for b := range 64 {
			if word&(1<<b) != 0 {
				s = append(s, i*64+b)
			}
		}
	}
	return s
}

// Usable is the set of CPUs this thread may run on: the machine's, less
// what a cpuset cgroup or a parent's affinity took away.
func Usable() (Set, error) {
	m, err := getAffinity(0)
	if err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	return m.set(), nil
}

// OfProcess is the set of CPUs the process pid (its main thread) may run on.
func OfProcess(pid int) (Set, error) {
	m, err := getAffinity(pid)
	if err != nil {
		return nil, fmt.Errorf("sched_getaffinity(%d): %w", pid, err)
	}
	return m.set(), nil
}

// PinProcess binds every thread of this process to s; threads made later
// inherit it from the thread that makes them. It repeats until a pass over
// /proc/self/task finds no thread it has not pinned, since the Go runtime
// may start one meanwhile.
func PinProcess(s Set) error {
	m, err := s.mask()
	if err != nil {
		return err
	}
	pinned := map[int]bool{}
	for {
		entries, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		added := false
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || pinned[tid] {
				continue
			}
			if err := setAffinity(tid, m); err != nil && err != syscall.ESRCH {
				return fmt.Errorf("sched_setaffinity(%d, %s): %w", tid, s, err)
			}
			pinned[tid], added = true, true
		}
		if !added {
			return nil
		}
	}
}

// WithThreadAffinity runs start on a thread bound to s, then restores the
// thread's binding. A process that start forks inherits s, and with it
// its runtime's thread counts (Go's GOMAXPROCS, the Lisp server's
// reactors) from its first instruction on.
func WithThreadAffinity(s Set, start func() error) error {
	m, err := s.mask()
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := getAffinity(0)
	if err != nil {
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	if err := setAffinity(0, m); err != nil {
		return fmt.Errorf("sched_setaffinity(%s): %w", s, err)
	}
	startErr := start()
	if err := setAffinity(0, old); err != nil && startErr == nil {
		return fmt.Errorf("restoring the thread's CPUs: %w", err)
	}
	return startErr
}
