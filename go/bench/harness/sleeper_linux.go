package harness

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// sleeper waits for an open loop's due times with clock_nanosleep on the
// monotonic clock, to an absolute time: the kernel's high-resolution timers
// wake it within microseconds, where the runtime's timers wake a goroutine
// up to a millisecond late in an idle process (its poller waits in
// milliseconds). The sleep holds the dispatcher's OS thread and P, so the
// open loop runs with one P more than the process had (openLoopProcs): the
// others keep running every other goroutine meanwhile. Polling the clock
// instead would starve them of the network poller.
type sleeper struct {
	goStart   time.Time // one instant on both clocks
	monoStart time.Duration
}

func newSleeper() *sleeper {
	runtime.LockOSThread()
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) // cannot fail for this clock
	return &sleeper{goStart: time.Now(), monoStart: time.Duration(ts.Nano())}
}

func (s *sleeper) close() { runtime.UnlockOSThread() }

// until returns at due, or false once ctx has ended; one sleep lasts at
// most maxSleepSlice, so that a cancelled run is noticed soon.
func (s *sleeper) until(ctx context.Context, due time.Time) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		left := time.Until(due)
		if left <= 0 {
			return true
		}
		wake := s.monoStart + due.Sub(s.goStart)
		if left > maxSleepSlice {
			wake -= left - maxSleepSlice
		}
		ts := unix.NsecToTimespec(int64(wake))
		if err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil); err != nil && err != unix.EINTR {
			time.Sleep(time.Until(due)) // not expected: the runtime's timer then
		}
	}
}

// maxSleepSlice bounds one sleep, so that a cancelled run is noticed soon.
const maxSleepSlice = 50 * time.Millisecond

// openLoopProcs is the GOMAXPROCS an open loop runs with: one more than
// the process's, for the dispatcher's sleeps.
func openLoopProcs(procs int) int { return procs + 1 }
