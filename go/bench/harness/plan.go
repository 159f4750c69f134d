package harness

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxOps bounds a fixed-duration repetition (and a timed warm-up) when
// Plan.MaxOps is zero. It is far above what any suite reaches in seconds, and
// only exists so that an op that returns instantly (a broken server answering
// with an immediate error) cannot spin for the whole duration at full speed
// and flood the error counters.
const DefaultMaxOps = 100_000_000

// Plan says how much work one scenario does.
type Plan struct {
	// Workers is the number of concurrent callers of the Op (clients).
	Workers int
	// Ops, when positive, makes each repetition a fixed-iteration run: Ops
	// operations in total, shared among the workers as they become free.
	// A fixed count gives comparable wall and CPU times across variants.
	Ops int64
	// Duration, when positive, makes each repetition a fixed-duration run:
	// workers start operations until Duration has passed.
	Duration time.Duration
	// MaxOps caps a fixed-duration repetition; 0 means DefaultMaxOps.
	MaxOps int64
	// Rate, when positive, makes a fixed-duration repetition open-loop:
	// operations are due on a fixed schedule, Rate per second in all, and
	// each one's latency is measured from when it was due, not from when a
	// worker got to it (as wrk2 does). A stall then shows in the latency of
	// every operation that waited behind it, instead of delaying them
	// unseen (coordinated omission). Operations do not wait for each other
	// (see openloop.go): operation n runs as worker n mod Workers, so the
	// Op must allow several calls with one worker index at once.
	Rate float64
	// MaxInFlight bounds an open loop's concurrent operations; 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
	// Warmup runs before the first repetition and is not measured.
	Warmup Warmup
	// Reps is the number of measured repetitions; statistics across
	// repetitions (median, significance) need several.
	Reps int
}

// Validate reports a plan that cannot run.
func (p Plan) Validate() error {
	var errs []error
	if p.Workers < 1 {
		errs = append(errs, fmt.Errorf("workers must be at least 1, got %d", p.Workers))
	}
	if (p.Ops > 0) == (p.Duration > 0) {
		errs = append(errs, errors.New("exactly one of ops and duration must be positive"))
	}
	if p.Ops < 0 || p.Duration < 0 || p.MaxOps < 0 || p.Rate < 0 || p.MaxInFlight < 0 {
		errs = append(errs, errors.New("ops, duration, max ops, rate and max in flight must not be negative"))
	}
	if p.Rate > 0 && p.Duration <= 0 {
		errs = append(errs, errors.New("a rate needs a fixed duration"))
	}
	if p.Reps < 1 {
		errs = append(errs, fmt.Errorf("reps must be at least 1, got %d", p.Reps))
	}
	if p.Warmup.Ops < 0 || p.Warmup.Duration < 0 {
		errs = append(errs, errors.New("warm-up must not be negative"))
	}
	return errors.Join(errs...)
}

func (p Plan) maxInFlight() int {
	if p.MaxInFlight > 0 {
		return p.MaxInFlight
	}
	return DefaultMaxInFlight
}

func (p Plan) maxOps() int64 {
	if p.MaxOps > 0 {
		return p.MaxOps
	}
	return DefaultMaxOps
}

// Warmup is an unmeasured phase that lets connections open, caches and pools
// fill, and the heap size and GC pacing of both peers settle, so that the
// first repetition is not an outlier. Either field may be set; Ops wins if
// both are.
type Warmup struct {
	Ops      int64
	Duration time.Duration
}

// IsZero reports whether there is no warm-up.
func (w Warmup) IsZero() bool { return w.Ops <= 0 && w.Duration <= 0 }

// String formats w as Set accepts it.
func (w Warmup) String() string {
	switch {
	case w.Ops > 0:
		return strconv.FormatInt(w.Ops, 10)
	case w.Duration > 0:
		return w.Duration.String()
	}
	return "0"
}

// Set parses a warm-up flag value: an operation count ("500"), a duration
// ("2s") or "0" for none.
func (w *Warmup) Set(s string) error {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return fmt.Errorf("warm-up %q: must not be negative", s)
		}
		*w = Warmup{Ops: n}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("warm-up %q: want an operation count like 500 or a duration like 2s", s)
	}
	if d < 0 {
		return fmt.Errorf("warm-up %q: must not be negative", s)
	}
	*w = Warmup{Duration: d}
	return nil
}
