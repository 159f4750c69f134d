package inprocgrpc

import (
	"context"
	"runtime"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// stream is the state a streaming RPC's two sides share. Messages travel in
// two bounded queues (buffered channels): a sender blocks only when its
// queue is full, which bounds memory as flow control does over a network,
// and sender and receiver wake each other only when a queue runs empty or
// full.
//
// The server's context (ctx) is also the stream's life: it ends when the
// handler returns, when the client's context ends, or when the client
// abandons the stream, and every blocking operation of either side selects
// on it. The response queue is never closed, so a handler's stray goroutine
// can never send on a closed channel; the end of the stream is ctx ending
// with finished set.
type stream struct {
	ctx  serverContext
	srv  serverStream
	m    *method
	xfer transfer

	reqs  chan frame // requests; closed by CloseSend
	resps chan frame // a metadata.MD header first if any, then responses
	// The sending sides' carrier caches: each direction has one sender at
	// a time, as grpc requires.
	reqCarriers, respCarriers carrierCache

	// finished is set once the handler has returned, after status and
	// trailer: reading them is safe once finished reads true.
	finished atomic.Bool
	status   *status.Status // nil for OK
	trailer  metadata.MD
}

// newStream is the grpc.Streamer behind NewStream.
func (c *Channel) newStream(ctx context.Context, desc *grpc.StreamDesc, _ *grpc.ClientConn, name string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	m := c.lookup(name)
	if m == nil {
		return nil, c.unimplemented(name)
	}
	ctx, err := withCallCredentials(ctx, m.name, opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, contextStatus(err)
	}
	n := c.bufferSize()
	s := &stream{m: m, xfer: c.transfer(), reqs: make(chan frame, n), resps: make(chan frame, n)}
	s.ctx.init(ctx, m.name, s)
	s.ctx.Done() // both sides select on it: make it, and wire the client's cancellation, now
	s.srv.s = s
	cs := &clientStream{s: s, ctx: ctx, serverStreams: desc.ServerStreams, opts: opts}
	// A client that drops a stream without finishing it or cancelling its
	// context would otherwise leave the handler blocked forever. The client
	// handle is a separate allocation that the server side never points to,
	// so it can become garbage while the handler runs.
	runtime.AddCleanup(cs, abandon, s)
	go c.serve(s)
	return cs, nil
}

// abandon ends a stream whose client handle was garbage collected.
func abandon(s *stream) { s.ctx.cancel(context.Canceled) }

// serve runs the handler on the stream's own goroutine.
func (c *Channel) serve(s *stream) {
	var err error
	switch {
	case s.m.unary != nil:
		err = c.serveUnaryStream(s)
	case c.streamServer != nil:
		err = c.streamServer(s.m.srv, &s.srv, &s.m.info, s.m.stream)
	default:
		err = s.m.stream(s.m.srv, &s.srv)
	}
	s.finish(err)
}

// serveUnaryStream serves a unary method called through NewStream, as a
// grpc.Server does: one request in, one response out.
func (c *Channel) serveUnaryStream(s *stream) error {
	resp, err := s.m.unary(s.m.srv, s.ctx.handler, s.srv.RecvMsg, c.unaryServer)
	if err != nil {
		return err
	}
	return s.srv.SendMsg(resp)
}

// finish publishes the handler's outcome and ends the stream.
func (s *stream) finish(err error) {
	_, trailer := s.ctx.close() // queues an unsent header first
	s.status, s.trailer = statusOf(err), trailer
	s.finished.Store(true)
	s.ctx.cancel(context.Canceled)
}
