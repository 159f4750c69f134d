// Package harness runs benchmark operations the same way for every Go
// benchmark client of this repository, measures them, and emits the results
// as a schema file, Go benchmark text and a printed table.
//
// A benchmark binary defines an Op (one RPC, or one streaming exchange), a
// Plan (fixed iteration count or fixed duration, workers, warm-up,
// repetitions) and hands both to a Runner. Each repetition measures wall
// time, client CPU (getrusage) and optionally a server process's CPU
// (/proc/<pid>/stat), latency per op in one HdrHistogram per worker, and heap
// bytes and allocations per op (runtime.MemStats deltas).
//
// Sharing one harness is what makes numbers from different suites and
// different days comparable: the same warm-up, the same GC before each
// repetition, the same definitions of ops/s and bytes/op.
package harness
