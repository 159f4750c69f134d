package inprocgrpc

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// unaryCall is the server side of a unary RPC: its context, and the request
// for the handler's decode function.
type unaryCall struct {
	serverContext
	req  any
	xfer copier
}

// decode is the handler's dec: it copies the client's request into the
// handler's fresh message.
func (u *unaryCall) decode(m any) error { return u.xfer.copy(m, u.req) }

// invoke is the grpc.UnaryInvoker behind Invoke.
func (c *Channel) invoke(ctx context.Context, name string, req, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
	m := c.lookup(name)
	if m == nil {
		return c.unimplemented(name)
	}
	if m.unary == nil {
		return c.invokeStreaming(ctx, m, req, reply, opts)
	}
	ctx, err := withCallCredentials(ctx, m.name, opts)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return contextStatus(err)
	}
	u := &unaryCall{req: req, xfer: c.unaryTransfer()}
	u.init(ctx, m.name, nil)
	if c.detachedUnary {
		return c.invokeDetached(ctx, m, u, reply, opts)
	}
	// The handler runs right here, on the caller's goroutine: a unary RPC
	// needs no second goroutine as long as the caller is willing to wait for
	// the handler, which is what it does anyway.
	resp, herr := m.unary(m.srv, u.handler, u.decode, c.unaryServer)
	u.req = nil // a handler may keep its context; it must not keep the request alive
	header, trailer := u.close()
	u.cancel(context.Canceled) // the RPC is over, and so is its context
	err = c.unaryResult(ctx, resp, herr, reply)
	setCallResults(opts, header, trailer)
	return err
}

// unaryResult turns what the handler returned into what the client gets.
func (c *Channel) unaryResult(ctx context.Context, resp any, herr error, reply any) error {
	// A client whose deadline passed, or who gave up, gets that, as it would
	// from its own timer over a network, whatever the handler did after.
	if err := ctx.Err(); err != nil {
		return contextStatus(err)
	}
	if herr != nil {
		return statusError(herr)
	}
	if resp == nil {
		return internalError("handler returned neither a response nor an error")
	}
	return c.unaryTransfer().copy(reply, resp)
}

// invokeDetached runs the handler on its own goroutine (WithDetachedUnary),
// so that the caller can leave at its deadline. The handler's dec copies the
// caller's request straight into the handler's message, as the inline path
// does, while the caller is still waiting; a caller that leaves takes its
// request back first (detachedRequest), so the handler never reads a
// message the caller may change again. The response is copied after it is
// received.
func (c *Channel) invokeDetached(ctx context.Context, m *method, u *unaryCall, reply any, opts []grpc.CallOption) error {
	in := &detachedRequest{req: u.req, xfer: u.xfer}
	u.req = nil
	type result struct {
		resp            any
		err             error
		header, trailer metadata.MD
	}
	done := make(chan result, 1) // never blocks the handler's goroutine
	go func() {
		resp, err := m.unary(m.srv, u.handler, in.decode, c.unaryServer)
		in.leave(nil) // whatever happens now, the handler has its request
		header, trailer := u.close()
		u.cancel(context.Canceled)
		done <- result{resp, err, header, trailer}
	}()
	select {
	case r := <-done:
		err := c.unaryResult(ctx, r.resp, r.err, reply)
		setCallResults(opts, r.header, r.trailer)
		return err
	case <-ctx.Done():
		// The handler's context ends too (its Err sees the client's), and
		// the goroutine ends when the handler returns.
		in.leave(ctx.Err())
		u.cancel(ctx.Err())
		setCallResults(opts, nil, nil)
		return contextStatus(ctx.Err())
	}
}

// invokeStreaming calls a streaming method with Invoke, as grpc-go allows:
// one request, one response, over a stream.
func (c *Channel) invokeStreaming(ctx context.Context, m *method, req, reply any, opts []grpc.CallOption) error {
	cs, err := c.newStream(ctx, &grpc.StreamDesc{}, nil, m.name, opts...)
	if err != nil {
		return err
	}
	if err := cs.SendMsg(req); err != nil {
		// The stream's status, if it ended, explains the failed send.
		if rerr := cs.RecvMsg(reply); rerr != nil {
			return rerr
		}
		return err
	}
	if err := cs.CloseSend(); err != nil {
		return err
	}
	return cs.RecvMsg(reply)
}

// detachedRequest is the caller's request as a detached handler reads it:
// in place, and only while the caller waits.
type detachedRequest struct {
	mu   sync.Mutex
	req  any   // nil once the caller left or the handler returned
	left error // why a later decode fails: the caller's context error
	xfer copier
}

// decode is the handler's dec. A handler may call it more than once; each
// call copies the request afresh, as long as the caller is still there.
func (d *detachedRequest) decode(m any) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.req == nil {
		return contextStatus(d.left)
	}
	return d.xfer.copy(m, d.req)
}

// leave ends the handler's access to the request: err is the caller's
// context error when it left, nil when the handler returned. A copy in
// progress finishes first.
func (d *detachedRequest) leave(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		err = context.Canceled // the RPC is over
	}
	if d.req != nil {
		d.req, d.left = nil, err
	}
}
