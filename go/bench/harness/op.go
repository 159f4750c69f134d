package harness

import "context"

// Op performs one benchmark operation on behalf of worker (0 <= worker <
// Plan.Workers), typically one RPC. It returns how many messages the
// operation carried, which gives messages/s for streaming RPCs (return 1 for
// a unary call), and an error if the operation failed.
//
// Each worker calls its Op sequentially, so per-worker state (a client
// stream, a buffer) indexed by worker needs no locking. ctx is cancelled when
// the run is aborted, not when a fixed-duration run's time is up: in-flight
// operations then complete normally rather than being counted as errors.
type Op func(ctx context.Context, worker int) (msgs int, err error)
