package inprocgrpc

import (
	"context"
	"io"

	"google.golang.org/grpc/metadata"
)

// serverStream is the grpc.ServerStream a streaming handler gets.
type serverStream struct{ s *stream }

func (ss *serverStream) Context() context.Context        { return ss.s.ctx.handler }
func (ss *serverStream) SetHeader(md metadata.MD) error  { return ss.s.ctx.SetHeader(md) }
func (ss *serverStream) SendHeader(md metadata.MD) error { return ss.s.ctx.SendHeader(md) }
func (ss *serverStream) SetTrailer(md metadata.MD)       { _ = ss.s.ctx.SetTrailer(md) }

// SendMsg queues a copy of m for the client, blocking while the queue is
// full. It fails once the RPC is over.
func (ss *serverStream) SendMsg(m any) error {
	s := ss.s
	if err := s.ctx.Err(); err != nil {
		return contextStatus(err)
	}
	s.ctx.sendHeader() // the header, if any, goes first
	v, err := s.xfer.detach(m, &s.respCarriers)
	if err != nil {
		return err
	}
	// Try without the select first: a queue with room needs no wait, and
	// a plain send is cheaper than a two-way select.
	select {
	case s.resps <- v:
		return nil
	default:
	}
	select {
	case s.resps <- v:
		return nil
	case <-s.ctx.Done():
		return contextStatus(s.ctx.Err())
	}
}

// RecvMsg takes the next request into m; io.EOF means the client closed
// its side.
func (ss *serverStream) RecvMsg(m any) error {
	s := ss.s
	if err := s.ctx.Err(); err != nil {
		return contextStatus(err)
	}
	var v frame
	var ok bool
	select {
	case v, ok = <-s.reqs:
	default:
		var got bool
		if v, ok, got = spinRecv(s.reqs, nil); got {
			break
		}
		select {
		case v, ok = <-s.reqs:
		case <-s.ctx.Done():
			return contextStatus(s.ctx.Err())
		}
	}
	if !ok {
		return io.EOF
	}
	err := s.xfer.attach(m, v)
	v.release()
	return err
}
