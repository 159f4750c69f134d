package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grpcbench/grpcbench/go/handlercost/wire"
)

// maxPollsEach bounds the calls one poller makes in a cell: far more than
// a cell's length allows at the shortest -poll.
const maxPollsEach = 100_000

// pollers hold long Sleep calls open on a server, each poller making one
// after the other until told to stop, as clients of a long-poll API do.
type pollers struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	done     atomic.Int64 // polls that completed
	failed   atomic.Int64 // polls that failed
	mu       sync.Mutex
	firstErr error
	// taken are the counts that take has returned so far.
	takenDone, takenFailed int64
}

// startPolls starts n pollers, spread over the connections, each asking
// for d per call.
func startPolls(ctx context.Context, cs conns, n int, d time.Duration) *pollers {
	p := &pollers{stop: make(chan struct{})}
	req := wire.Encode(d)
	for i := range n {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for range maxPollsEach {
				select {
				case <-p.stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				callCtx, cancel := context.WithTimeout(ctx, d+callGrace)
				p.record(call(callCtx, cs[i%len(cs)], wire.Sleep, req))
				cancel()
			}
		}()
	}
	return p
}

func (p *pollers) record(err error) {
	if err == nil {
		p.done.Add(1)
		return
	}
	p.failed.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstErr == nil {
		p.firstErr = err
	}
}

// take returns how many polls completed and failed since it was last
// called (or since they started).
func (p *pollers) take() (done, failed int64) {
	d, f := p.done.Load(), p.failed.Load()
	done, failed = d-p.takenDone, f-p.takenFailed
	p.takenDone, p.takenFailed = d, f
	return done, failed
}

// finish lets the polls in flight end (each within its own deadline) and
// makes no more; it returns how many completed and failed since the last
// take, and the first failure of all.
func (p *pollers) finish() (done, failed int64, firstErr error) {
	close(p.stop)
	p.wg.Wait()
	done, failed = p.take()
	p.mu.Lock()
	defer p.mu.Unlock()
	return done, failed, p.firstErr
}
