package inprocgrpc

import (
	"context"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// clientStream is the grpc.ClientStream NewStream returns. Send-side state
// needs no lock: grpc allows one sender, and CloseSend not concurrently
// with SendMsg. The receive side has a mutex, because Header may be called
// concurrently with RecvMsg.
type clientStream struct {
	s             *stream
	ctx           context.Context
	serverStreams bool // false: exactly one response, then the end
	opts          []grpc.CallOption

	sendClosed bool

	mu         sync.Mutex
	header     metadata.MD
	headerDone bool
	pending    frame // read ahead by Header, if hasPending
	pendingEnd bool  // Header read ahead the end of the stream
	hasPending bool
	err        error // once set, the stream is over: io.EOF or a status
	trailer    metadata.MD
}

var errSendAfterClose = status.Error(codes.Internal, "SendMsg called after CloseSend")

func (cs *clientStream) Context() context.Context { return cs.ctx }

// SendMsg queues a copy of m for the server, blocking while the queue is
// full. As in grpc-go, it returns io.EOF when the server has ended the
// stream (RecvMsg then tells how), and the status when the client's context
// ended.
func (cs *clientStream) SendMsg(m any) error {
	if cs.sendClosed {
		return errSendAfterClose
	}
	s := cs.s
	if err := cs.ctx.Err(); err != nil {
		return contextStatus(err)
	}
	if s.finished.Load() {
		return io.EOF
	}
	v, err := s.xfer.detach(m, &s.reqCarriers)
	if err != nil {
		return err
	}
	select {
	case s.reqs <- v:
		return nil
	default:
	}
	select {
	case s.reqs <- v:
		return nil
	case <-s.ctx.Done():
		if err := cs.ctx.Err(); err != nil {
			return contextStatus(err)
		}
		return io.EOF
	}
}

// CloseSend tells the server that no more requests come (its RecvMsg
// returns io.EOF after the queued ones).
func (cs *clientStream) CloseSend() error {
	if !cs.sendClosed {
		cs.sendClosed = true
		close(cs.s.reqs)
	}
	return nil
}

// Header waits for the response header: until the server sends it, sends a
// message without one, or ends the stream (nil, nil: no header).
func (cs *clientStream) Header() (metadata.MD, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.headerDone && cs.err == nil {
		f, end, err := cs.next()
		if err != nil {
			return nil, err
		}
		// A message or the end: RecvMsg takes it from here.
		cs.pending, cs.pendingEnd, cs.hasPending = f, end, true
	}
	return cs.header, nil
}

// Trailer returns the trailer, once RecvMsg has returned an error
// (io.EOF included).
func (cs *clientStream) Trailer() metadata.MD {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.trailer
}

// RecvMsg takes the next response into m. It returns io.EOF at the end of a
// successful stream, and the status otherwise.
func (cs *clientStream) RecvMsg(m any) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.err != nil {
		return cs.err
	}
	f, end, err := cs.next()
	if err == nil && end {
		err = cs.endStatus()
		if err == io.EOF && !cs.serverStreams {
			// A unary response is missing: grpc-go words it so.
			err = status.Error(codes.Internal, "cardinality violation: expected <{ message }>, got <EOF>")
		}
	}
	if err == nil {
		err = cs.s.xfer.attach(m, f)
		f.release()
	}
	if err == nil && !cs.serverStreams {
		// Exactly one response: what follows must be the end, whose status
		// is the call's.
		_, end, err = cs.next()
		switch {
		case err != nil:
		case !end:
			err = status.Error(codes.Internal, "cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message")
		default:
			err = cs.endStatus()
		}
		if err == io.EOF {
			cs.end(io.EOF)
			return nil
		}
	}
	if err != nil {
		return cs.end(err)
	}
	return nil
}

// next returns the next message, or end, after any read-ahead and
// recording the header on the way; or the status of the client's context
// once it has ended.
func (cs *clientStream) next() (f frame, end bool, err error) {
	if cs.hasPending {
		cs.hasPending = false
		return cs.pending, cs.pendingEnd, nil
	}
	s := cs.s
	for {
		if err := cs.ctx.Err(); err != nil {
			return frame{}, false, contextStatus(err)
		}
		select {
		case f = <-s.resps:
		default:
			var got bool
			if f, _, got = spinRecv(s.resps, &s.finished); got {
				break
			}
			select {
			case f = <-s.resps:
			case <-s.ctx.Done():
				// Responses queued before the end still come first.
				select {
				case f = <-s.resps:
				default:
					if err := cs.ctx.Err(); err != nil {
						return frame{}, false, contextStatus(err)
					}
					return frame{}, true, nil
				}
			}
		}
		if md, ok := f.msg.(metadata.MD); ok {
			cs.header, cs.headerDone = md, true
			continue
		}
		cs.headerDone = true
		return f, false, nil
	}
}

// endStatus is how the stream ended, once the end has been seen.
func (cs *clientStream) endStatus() error {
	if !cs.s.finished.Load() {
		// Ended without the handler returning: the stream was abandoned.
		return status.Error(codes.Canceled, "stream abandoned")
	}
	cs.trailer = cs.s.trailer
	if st := cs.s.status; st != nil {
		return st.Err()
	}
	return io.EOF
}

// end records the outcome, fills the call options, and, if the client is
// the one giving up (a context, a bad message), ends the server side too.
func (cs *clientStream) end(err error) error {
	cs.err = err
	cs.headerDone = true
	if !cs.s.finished.Load() {
		cs.s.ctx.cancel(context.Canceled)
	}
	setCallResults(cs.opts, cs.header, cs.trailer)
	return err
}
