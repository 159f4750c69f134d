package main

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// connectTimeout bounds how long a scenario waits for its connections.
// Loopback connections are ready in milliseconds; a server that is slow to
// accept them is reported rather than waited for.
const connectTimeout = 10 * time.Second

// dial opens the connections of one scenario and returns one client per
// worker, and a func that closes them. Each ClientConn is its own TCP
// connection and HTTP/2 session, so per-client mode makes one per client
// and shared mode one for all.
//
// The connections are made ready before the clock starts: otherwise the
// first repetition (or the warm-up) would include TCP and HTTP/2 set-up, and
// a server that refuses connections would show as a run of instant errors
// instead of one clear message.
func dial(ctx context.Context, addr string, clients int, mode connMode, t *transport) ([]pb.RouteGuideClient, func(), error) {
	n := clients
	if mode == shared {
		n = 1
	}
	conns := make([]*grpc.ClientConn, 0, n)
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	for range n {
		// The passthrough scheme hands the address to the dialer as is,
		// with no name resolution: it is a loopback IP literal.
		c, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(t.creds()))
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("connecting to %s: %w", addr, err)
		}
		conns = append(conns, c)
		c.Connect() // start all handshakes before waiting for any
	}
	for i, c := range conns {
		if err := waitReady(ctx, c); err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("connection %d of %d to %s, within %v: %w", i+1, n, addr, connectTimeout, err)
		}
	}
	out := make([]pb.RouteGuideClient, clients)
	for i := range out {
		out[i] = pb.NewRouteGuideClient(conns[i%len(conns)])
	}
	return out, closeAll, nil
}

// waitReady waits until c is connected, or ctx ends.
func waitReady(ctx context.Context, c *grpc.ClientConn) error {
	for {
		state := c.GetState()
		if state == connectivity.Ready {
			return nil
		}
		if !c.WaitForStateChange(ctx, state) {
			return fmt.Errorf("not ready (state %v): %w", state, ctx.Err())
		}
	}
}
