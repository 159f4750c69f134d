package inprocgrpc

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// metadataState is the response metadata a handler sets. It lives in the
// serverContext, under its mutex, because grpc.SetHeader and friends reach
// it through the context from any goroutine.
type metadataState struct {
	header, trailer metadata.MD
	// headerSent: SetHeader now fails. For a stream, the header (if any)
	// is queued to the client, ahead of every message.
	headerSent bool
	// closed: the handler has returned; SetTrailer fails too.
	closed bool
}

// Errors as grpc-go words them.
var (
	errHeaderSent = status.Error(codes.Internal, "transport: SendHeader called multiple times")
	errStreamDone = status.Error(codes.Internal, "transport: the stream is done")
)

// serverContext is the grpc.ServerTransportStream of its RPC.

func (c *serverContext) Method() string { return c.method }

func (c *serverContext) SetHeader(md metadata.MD) error { return c.setHeader(md, false) }

func (c *serverContext) SendHeader(md metadata.MD) error { return c.setHeader(md, true) }

func (c *serverContext) setHeader(md metadata.MD, send bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.md.headerSent || c.md.closed {
		return errHeaderSent
	}
	c.md.header = joinMD(c.md.header, md)
	if send {
		c.sendHeaderLocked()
	}
	return nil
}

func (c *serverContext) SetTrailer(md metadata.MD) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.md.closed {
		return errStreamDone
	}
	c.md.trailer = joinMD(c.md.trailer, md)
	return nil
}

// sendHeader marks the header sent, as the first response message does.
func (c *serverContext) sendHeader() {
	if c.headerFlushed.Load() {
		return
	}
	c.mu.Lock()
	if !c.md.headerSent {
		c.sendHeaderLocked()
	}
	c.mu.Unlock()
}

// sendHeaderLocked queues a stream's header to the client. It cannot block:
// no message has been queued before the header, so the queue is empty.
// Holding the lock while queuing keeps a message sent concurrently (through
// grpc.SendHeader on another goroutine) behind the header.
func (c *serverContext) sendHeaderLocked() {
	c.md.headerSent = true
	defer c.headerFlushed.Store(true)
	if c.stream != nil && len(c.md.header) > 0 {
		select {
		case c.stream.resps <- frame{msg: c.md.header}:
		default:
		}
	}
}

// close ends the handler's part: an unsent header is sent (a stream's
// client reads it before the end of the stream), and the metadata is
// frozen and returned.
func (c *serverContext) close() (header, trailer metadata.MD) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.md.headerSent {
		c.sendHeaderLocked()
	}
	c.md.closed = true
	return c.md.header, c.md.trailer
}

// joinMD adds src to dst (made if nil). Keys are lowercased, as they are on
// the wire; the client gets this private map, never the handler's.
func joinMD(dst, src metadata.MD) metadata.MD {
	if dst == nil {
		dst = make(metadata.MD, len(src))
	}
	for k, v := range src {
		k = strings.ToLower(k)
		dst[k] = append(dst[k], v...)
	}
	return dst
}
