package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/handlercost/wire"
)

// Bounds on calls: a connection must answer its first call within
// connectTimeout, and every call within callGrace beyond what it asks the
// handler to take, so that a server that never answers fails calls
// instead of hanging the run.
const (
	connectTimeout = 10 * time.Second
	callGrace      = 10 * time.Second
)

// conns are a cell's client connections, each its own TCP connection and
// HTTP/2 session; caller i uses connection i mod len(conns).
type conns []*grpc.ClientConn

// dial opens n connections to addr and makes a Fast call on each, so that
// they are open, and the service answers, before the clock starts.
func dial(ctx context.Context, addr string, n int) (conns, error) {
	var cs conns
	for range n {
		// The passthrough scheme hands the loopback literal to the
		// dialer as it is, with no name resolution.
		c, err := grpc.NewClient("passthrough:///"+addr,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.ForceCodec(wire.Codec{})))
		if err != nil {
			cs.close()
			return nil, fmt.Errorf("connecting to %s: %w", addr, err)
		}
		cs = append(cs, c)
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	for i, c := range cs {
		if err := call(ctx, c, wire.Fast, nil, grpc.WaitForReady(true)); err != nil {
			cs.close()
			return nil, fmt.Errorf("first call on connection %d of %d to %s: %w", i+1, n, addr, err)
		}
	}
	return cs, nil
}

// close closes every connection.
func (cs conns) close() {
	for _, c := range cs {
		c.Close()
	}
}

// call makes one call of method with req and checks that the response
// echoes it.
func call(ctx context.Context, c *grpc.ClientConn, method string, req []byte, opts ...grpc.CallOption) error {
	var resp []byte
	if err := c.Invoke(ctx, wire.Path(method), req, &resp, opts...); err != nil {
		return err
	}
	if !bytes.Equal(resp, req) {
		return errors.New(method + " did not echo its request")
	}
	return nil
}

// op is the harness operation of calling kind k, each call bounded in time.
func (cs conns) op(k handlerKind) harness.Op {
	req := wire.Encode(k.d)
	timeout := k.d + callGrace
	return func(ctx context.Context, worker int) (int, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return 1, call(ctx, cs[worker%len(cs)], k.method, req)
	}
}
