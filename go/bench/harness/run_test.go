package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// countingOp counts calls and returns one message per call.
func countingOp(calls *atomic.Int64) Op {
	return func(ctx context.Context, worker int) (int, error) {
		calls.Add(1)
		return 1, nil
	}
}

func TestFixedIterationsRunsExactlyN(t *testing.T) {
	var calls atomic.Int64
	r := &Runner{Suite: "test", Scenario: "n", Plan: Plan{Workers: 7, Ops: 1000, Reps: 3, Warmup: Warmup{Ops: 50}}}
	reps, err := r.Run(context.Background(), countingOp(&calls))
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 3 {
		t.Fatalf("%d reps, want 3", len(reps))
	}
	for i, rep := range reps {
		if rep.Ops != 1000 || rep.Errors != 0 || rep.Latency.Count != 1000 || rep.Msgs != 1000 {
			t.Errorf("rep %d: ops %d errors %d latencies %d msgs %d, want 1000 ops, 0 errors", i, rep.Ops, rep.Errors, rep.Latency.Count, rep.Msgs)
		}
		if rep.Wall <= 0 {
			t.Errorf("rep %d: wall %v", i, rep.Wall)
		}
	}
	if got := calls.Load(); got != 50+3*1000 {
		t.Errorf("op called %d times, want 50 warm-up + 3000", got)
	}
}

func TestWorkerIndexesAreInRange(t *testing.T) {
	var bad atomic.Int64
	op := func(ctx context.Context, worker int) (int, error) {
		if worker < 0 || worker >= 3 {
			bad.Add(1)
		}
		return 1, nil
	}
	r := &Runner{Plan: Plan{Workers: 3, Ops: 300, Reps: 1}}
	if _, err := r.Run(context.Background(), op); err != nil {
		t.Fatal(err)
	}
	if bad.Load() != 0 {
		t.Errorf("%d calls with a worker index outside [0, 3)", bad.Load())
	}
}

func TestErrorsAreCountedAndFirstKept(t *testing.T) {
	var calls atomic.Int64
	op := func(ctx context.Context, worker int) (int, error) {
		n := calls.Add(1)
		if n%10 == 0 {
			return 0, fmt.Errorf("failure %d", n)
		}
		return 1, nil
	}
	r := &Runner{Plan: Plan{Workers: 1, Ops: 100, Reps: 2}}
	reps, err := r.Run(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Ops != 90 || reps[0].Errors != 10 || reps[0].Attempts() != 100 {
		t.Errorf("rep 1: ops %d errors %d, want 90 and 10", reps[0].Ops, reps[0].Errors)
	}
	if reps[0].FirstError != "failure 10" || reps[1].FirstError != "failure 110" {
		t.Errorf("first errors %q, %q; want failure 10, failure 110", reps[0].FirstError, reps[1].FirstError)
	}
	if reps[0].Latency.Count != 90 {
		t.Errorf("latencies recorded %d, want only the 90 successes", reps[0].Latency.Count)
	}
	res := Result("flaky", nil, reps, nil)
	if res.Status != schema.StatusOK || res.Error != "failure 10" {
		t.Errorf("Result = %s %q, want ok with the first error", res.Status, res.Error)
	}
	if m, _ := res.Metric(schema.MetricErrors); m.Median != 10 {
		t.Errorf("errors metric median %v, want 10", m.Median)
	}
}

func TestAllFailingScenarioIsAnError(t *testing.T) {
	op := func(ctx context.Context, worker int) (int, error) { return 0, errors.New("connection refused") }
	r := &Runner{Plan: Plan{Workers: 2, Ops: 20, Reps: 1}}
	reps, err := r.Run(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	res := Result("down", map[string]any{"clients": 2}, reps, err)
	if res.Status != schema.StatusError || !strings.Contains(res.Error, "connection refused") {
		t.Errorf("Result = %s %q, want error mentioning the cause", res.Status, res.Error)
	}
	if err := validResult(res); err != nil {
		t.Error(err)
	}
}

func TestFixedDurationStops(t *testing.T) {
	var calls atomic.Int64
	op := func(ctx context.Context, worker int) (int, error) {
		calls.Add(1)
		time.Sleep(time.Millisecond)
		return 1, nil
	}
	r := &Runner{Plan: Plan{Workers: 4, Duration: 30 * time.Millisecond, Reps: 2, Warmup: Warmup{Duration: 10 * time.Millisecond}}}
	reps, err := r.Run(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	for i, rep := range reps {
		if rep.Ops == 0 {
			t.Errorf("rep %d ran no op", i)
		}
		// Every worker stops at its first op ending after the deadline,
		// so the repetition lasts at least the duration.
		if rep.Wall < 30*time.Millisecond {
			t.Errorf("rep %d wall %v, shorter than the 30ms duration", i, rep.Wall)
		}
	}
}

func TestFixedDurationHonoursMaxOps(t *testing.T) {
	var calls atomic.Int64
	r := &Runner{Plan: Plan{Workers: 3, Duration: time.Hour, MaxOps: 500, Reps: 1}}
	reps, err := r.Run(context.Background(), countingOp(&calls))
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Ops != 500 || calls.Load() != 500 {
		t.Errorf("ops %d, calls %d; want the cap of 500", reps[0].Ops, calls.Load())
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls, afterCancel atomic.Int64
	op := func(ctx context.Context, worker int) (int, error) {
		if ctx.Err() != nil {
			afterCancel.Add(1)
		}
		if calls.Add(1) == 100 {
			cancel()
		}
		return 1, nil
	}
	const workers = 2
	r := &Runner{Plan: Plan{Workers: workers, Duration: time.Hour, MaxOps: 1 << 40, Reps: 3}}
	reps, err := r.Run(ctx, op)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
	if len(reps) != 0 {
		t.Errorf("%d reps returned, want none completed", len(reps))
	}
	// A worker checks for cancellation before each op, so at most the op
	// it was about to start when cancel ran can follow.
	if n := afterCancel.Load(); n > workers {
		t.Errorf("%d ops started after the cancel; want at most one per worker", n)
	}
	res := Result("cancelled", nil, reps, err)
	if res.Status != schema.StatusError {
		t.Errorf("status %s, want error", res.Status)
	}
}

func TestRunRejectsBadPlans(t *testing.T) {
	for _, p := range []Plan{
		{Workers: 0, Ops: 1, Reps: 1},
		{Workers: 1, Reps: 1},
		{Workers: 1, Ops: 1, Duration: time.Second, Reps: 1},
		{Workers: 1, Ops: 1, Reps: 0},
		{Workers: 1, Ops: 1, Reps: 1, Warmup: Warmup{Ops: -1}},
	} {
		r := &Runner{Plan: p}
		if _, err := r.Run(context.Background(), countingOp(new(atomic.Int64))); err == nil {
			t.Errorf("plan %+v accepted", p)
		}
	}
}

type fakeServer struct{ reads int }

func (f *fakeServer) CPU() (CPUTimes, error) {
	f.reads++
	// 250ms of user and 50ms of system time per reading.
	return CPUTimes{User: time.Duration(f.reads) * 250 * time.Millisecond, System: time.Duration(f.reads) * 50 * time.Millisecond}, nil
}

func TestServerCPUAndAllocationsAreMeasured(t *testing.T) {
	op := func(ctx context.Context, worker int) (int, error) {
		sink = make([]byte, 4096)
		return 3, nil
	}
	r := &Runner{Plan: Plan{Workers: 1, Ops: 200, Reps: 2}, Server: &fakeServer{}}
	reps, err := r.Run(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	for i, rep := range reps {
		if !rep.HasServerCPU || rep.ServerCPU != (CPUTimes{User: 250 * time.Millisecond, System: 50 * time.Millisecond}) {
			t.Errorf("rep %d server CPU %+v, want one reading's delta", i, rep.ServerCPU)
		}
		if rep.BytesPerOp() < 4096 || rep.AllocsPerOp() < 1 {
			t.Errorf("rep %d: %.0f B/op, %.1f allocs/op; want at least the 4 KiB allocation", i, rep.BytesPerOp(), rep.AllocsPerOp())
		}
		if rep.Msgs != 600 {
			t.Errorf("rep %d msgs %d, want 3 per op", i, rep.Msgs)
		}
	}
	res := Result("alloc", nil, reps, nil)
	for _, name := range []string{schema.MetricServerCPU, schema.MetricMsgPerSec, schema.MetricBytesPerOp, schema.MetricAllocsPerOp, schema.MetricLatencyP99} {
		if _, ok := res.Metric(name); !ok {
			t.Errorf("metric %s missing", name)
		}
	}
	if err := validResult(res); err != nil {
		t.Error(err)
	}
}

// validResult checks a result through the schema validator, as a file.
func validResult(res schema.Result) error {
	f := schema.NewFile("test", schema.Environment{CPUModel: "x", CPUCount: 1, Kernel: "Linux 6", GoVersion: "go1", Platform: "linux_amd64", BuildConfig: "dev"})
	f.Results = []schema.Result{res}
	_, err := f.Marshal()
	return err
}

// TestOpenLoopCountsWaitingTime: one worker, operations due every 10 ms for
// 200 ms, each taking 30 ms. A closed loop would report 30 ms each; here
// operation k ends at 30(k+1) ms but was due at 10k ms, so the latencies
// grow to about 410 ms, and the 20 due operations all run.
func TestOpenLoopCountsWaitingTime(t *testing.T) {
	op := func(ctx context.Context, worker int) (int, error) {
		time.Sleep(30 * time.Millisecond)
		return 1, nil
	}
	// One operation in flight at most: each waits for the one before, and
	// that wait is both send lag and latency.
	r := &Runner{Plan: Plan{Workers: 1, Duration: 200 * time.Millisecond, Rate: 100, Reps: 1, MaxInFlight: 1}}
	reps, err := r.Run(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	rep := reps[0]
	if rep.Ops != 20 {
		t.Errorf("%d ops, want the 20 due in 200 ms at 100/s", rep.Ops)
	}
	if rep.Latency.Max < 350*time.Millisecond || rep.Latency.P50 < 150*time.Millisecond {
		t.Errorf("latency p50 %v, max %v: the waiting behind slow operations is not counted", rep.Latency.P50, rep.Latency.Max)
	}
	if !rep.HasSendLag || rep.SendLag.Max < 300*time.Millisecond {
		t.Errorf("send lag %+v: the dispatcher's waiting is not shown", rep.SendLag)
	}
}

// TestOpenLoopDoesNotWaitForEarlierOperations: with the default in-flight
// cap, slow operations overlap, as real callers' would: each latency is the
// operation's own, and the operations start on time, whatever the number
// of workers.
func TestOpenLoopDoesNotWaitForEarlierOperations(t *testing.T) {
	var inFlight, peak atomic.Int64
	op := func(ctx context.Context, worker int) (int, error) {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(30 * time.Millisecond)
		inFlight.Add(-1)
		return 1, nil
	}
	r := &Runner{Plan: Plan{Workers: 1, Duration: 200 * time.Millisecond, Rate: 100, Reps: 1}}
	reps, err := r.Run(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	rep := reps[0]
	if rep.Ops != 20 || peak.Load() < 2 {
		t.Errorf("%d ops, at most %d at once: want 20, overlapping", rep.Ops, peak.Load())
	}
	if rep.Latency.P50 > 100*time.Millisecond || rep.SendLag.P50 > 20*time.Millisecond {
		t.Errorf("latency p50 %v, send lag p50 %v: operations waited for each other", rep.Latency.P50, rep.SendLag.P50)
	}
	ms := Metrics(reps)
	found := false
	for _, m := range ms {
		found = found || m.Name == "send_lag_p99"
	}
	if !found {
		t.Error("no send lag metric")
	}
}

// An open loop fails when more than 0.1% of its operations failed: the
// percentiles of the rest would hide them.
func TestOpenLoopErrorBudget(t *testing.T) {
	var n atomic.Int64
	op := func(ctx context.Context, worker int) (int, error) {
		if n.Add(1)%10 == 0 {
			return 0, errors.New("unavailable")
		}
		return 1, nil
	}
	r := &Runner{Scenario: "x", Plan: Plan{Workers: 2, Duration: 100 * time.Millisecond, Rate: 200, Reps: 1}}
	if _, err := r.Run(context.Background(), op); err == nil || !strings.Contains(err.Error(), "2 of 20 operations failed") {
		t.Errorf("err = %v, want the error share named", err)
	}
}

// TestOpenLoopKeepsItsRate: with operations far quicker than the interval,
// an open-loop repetition starts the due operations and no more, and their
// latencies are the operations' own.
func TestOpenLoopKeepsItsRate(t *testing.T) {
	var calls atomic.Int64
	op := func(ctx context.Context, worker int) (int, error) {
		calls.Add(1)
		return 1, nil
	}
	r := &Runner{Plan: Plan{Workers: 2, Duration: 100 * time.Millisecond, Rate: 200, Reps: 1}}
	reps, err := r.Run(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	if rep := reps[0]; rep.Ops != 20 || calls.Load() != 20 {
		t.Errorf("%d ops (%d calls), want the 20 due in 100 ms at 200/s", rep.Ops, calls.Load())
	}
	if p := reps[0].Latency.P50; p > 5*time.Millisecond {
		t.Errorf("latency p50 %v for an operation that returns at once", p)
	}
}
