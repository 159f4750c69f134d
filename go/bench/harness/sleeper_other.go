//go:build !linux

package harness

import (
	"context"
	"time"
)

// sleeper waits for an open loop's due times on the runtime's timers where
// clock_nanosleep is not available (they may wake it a millisecond late,
// which the send lag then shows).
type sleeper struct{ timer *time.Timer }

func newSleeper() *sleeper { return &sleeper{} }

func (s *sleeper) close() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// until returns at due, or false once ctx has ended.
func (s *sleeper) until(ctx context.Context, due time.Time) bool {
	left := time.Until(due)
	if left <= 0 {
		return ctx.Err() == nil
	}
	if s.timer == nil {
		s.timer = time.NewTimer(left)
	} else {
		s.timer.Reset(left)
	}
	select {
	case <-ctx.Done():
		return false
	case <-s.timer.C:
		return true
	}
}

// openLoopProcs is the GOMAXPROCS an open loop runs with: the process's.
func openLoopProcs(procs int) int { return procs }
