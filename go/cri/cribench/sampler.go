package main

import (
	"context"
	"fmt"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// memReadTimeout bounds one MemStats call, made between repetitions.
const memReadTimeout = 10 * time.Second

// serverSampler is the Runner's server CPUSource, which also reads the mock
// server's heap counters (MockRuntimeDebug.MemStats) each time the harness
// reads the server's CPU: before and after every measured repetition, as
// CPUSource documents. Pairs of readings are thus the repetitions' bounds.
//
// The MemStats call itself is kept outside the CPU window where it can be:
// before a repetition it runs before the CPU reading, after one it runs
// after it. Its allocations (a few hundred bytes) fall inside the memory
// window, spread over the repetition's operations.
type serverSampler struct {
	cpu   harness.CPUSource
	debug cripb.MockRuntimeDebugClient // nil: a server without MockRuntimeDebug
	mem   []*cripb.MemStatsResponse
	calls int
}

func (s *serverSampler) CPU() (harness.CPUTimes, error) {
	before := s.calls%2 == 0
	s.calls++
	if before {
		if err := s.readMem(true); err != nil {
			return harness.CPUTimes{}, err
		}
	}
	t, err := s.cpu.CPU()
	if err != nil {
		return t, err
	}
	if !before {
		err = s.readMem(false)
	}
	return t, err
}

// readMem reads the server's heap counters; before a repetition it first
// has the server collect its garbage, as the harness collects the client's,
// so that no repetition pays for the previous one's garbage on either side.
// Both happen before the repetition's CPU reading.
func (s *serverSampler) readMem(beforeRep bool) error {
	if s.debug == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), memReadTimeout)
	defer cancel()
	m, err := s.debug.MemStats(ctx, &cripb.MemStatsRequest{CollectGarbage: beforeRep})
	if err != nil {
		return fmt.Errorf("server MemStats: %w", err)
	}
	s.mem = append(s.mem, m)
	return nil
}

// metrics returns the server's bytes and allocations per operation of
// reps, the repetitions the sampler was read for (none when it read no heap
// counters).
func (s *serverSampler) metrics(reps []harness.Rep) []schema.Metric {
	if s.debug == nil || len(reps) == 0 || len(s.mem) < 2*len(reps) {
		return nil
	}
	bytes := make([]float64, len(reps))
	allocs := make([]float64, len(reps))
	for i, r := range reps {
		before, after := s.mem[2*i], s.mem[2*i+1]
		ops := float64(r.Attempts())
		if ops == 0 {
			continue
		}
		bytes[i] = float64(after.TotalAllocBytes-before.TotalAllocBytes) / ops
		allocs[i] = float64(after.Mallocs-before.Mallocs) / ops
	}
	return []schema.Metric{
		schema.NewMetric(schema.MetricServerBytesPerOp, schema.UnitBytesPerOp, schema.LowerIsBetter, bytes),
		schema.NewMetric(schema.MetricServerAllocsPerOp, schema.UnitAllocsPerOp, schema.LowerIsBetter, allocs),
	}
}
