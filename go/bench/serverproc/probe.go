package serverproc

import (
	"context"
	"fmt"
	"time"
)

// StartProbed starts spec.Argv for a server that does not announce itself
// on stdout (kcp, say, which logs to stderr and serves on a port it was
// given): the server is ready once ready returns nil, polled every
// interval until spec.ReadyTimeout. addr is the HOST:PORT the caller told
// it to serve on; spec.Check vets it before anything starts. Stdout and
// stderr both go to spec.Log. On any failure the process is stopped before
// the error is returned, with ready's last error in it.
func StartProbed(ctx context.Context, spec Spec, addr string, interval time.Duration, ready func(context.Context) error) (*Process, error) {
	if spec.Check != nil {
		if err := spec.Check(addr); err != nil {
			return nil, fmt.Errorf("server address: %w", err)
		}
	}
	p, err := launch(spec, spec.Log)
	if err != nil {
		return nil, err
	}
	p.addr = addr
	if err := p.awaitReady(ctx, spec.ReadyTimeout, interval, ready); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// awaitReady polls ready until it succeeds, the process exits, the timeout
// passes or ctx ends.
func (p *Process) awaitReady(ctx context.Context, timeout, interval time.Duration, ready func(context.Context) error) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var last error
	for {
		probeCtx, cancel := context.WithTimeout(ctx, interval+time.Second)
		last = ready(probeCtx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("server exited (%v) before it was ready: last probe: %v", exitDescription(p.waitErr), last)
		case <-deadline.C:
			return fmt.Errorf("server not ready within %v: last probe: %v", timeout, last)
		case <-ctx.Done():
			return fmt.Errorf("waiting for the server to be ready: %w", ctx.Err())
		case <-tick.C:
		}
	}
}
