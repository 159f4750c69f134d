package inprocgrpc

import (
	"context"

	"google.golang.org/grpc"
)

// Channel is an in-process gRPC channel: services registered on it with
// RegisterService (or a generated RegisterXxxServer) are called through it
// by generated clients (NewXxxClient(channel)).
//
// The zero value is a usable Channel without interceptors or options;
// New makes one with them. Register services before calling them; a
// Channel is safe for concurrent use.
type Channel struct {
	registry

	unaryServer  grpc.UnaryServerInterceptor
	streamServer grpc.StreamServerInterceptor
	unaryClient  grpc.UnaryClientInterceptor
	streamClient grpc.StreamClientInterceptor
	// invoker and streamer are c.invoke and c.newStream, bound once so that
	// calls through a client interceptor do not allocate them each time.
	invoker  grpc.UnaryInvoker
	streamer grpc.Streamer

	xfer          transfer // nil means protoTransfer
	unaryXfer     copier   // nil means xfer
	streamBuffer  int      // 0 means DefaultStreamBuffer
	detachedUnary bool
}

var (
	_ grpc.ClientConnInterface = (*Channel)(nil)
	_ grpc.ServiceRegistrar    = (*Channel)(nil)
)

// New returns a Channel configured by opts.
func New(opts ...Option) *Channel {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	c := &Channel{
		unaryServer:   chainUnaryServer(o.unaryServer),
		streamServer:  chainStreamServer(o.streamServer),
		unaryClient:   chainUnaryClient(o.unaryClient),
		streamClient:  chainStreamClient(o.streamClient),
		streamBuffer:  o.streamBuffer,
		detachedUnary: o.detachedUnary,
	}
	switch {
	case o.codec != nil:
		c.xfer = codecTransfer{o.codec}
	case o.reflectOnly:
		c.xfer = protoTransfer{reflectOnly: true}
	}
	if o.codec == nil && o.sharedUnary {
		c.unaryXfer = sharedCopy{}
	}
	c.invoker = c.invoke
	c.streamer = c.newStream
	return c
}

// Invoke performs a unary RPC; generated clients call it.
func (c *Channel) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	if c.unaryClient != nil {
		return c.unaryClient(ctx, method, req, reply, nil, c.invoker, opts...)
	}
	return c.invoke(ctx, method, req, reply, nil, opts...)
}

// NewStream begins a streaming RPC; generated clients call it. The stream
// ends, and its server-side goroutine with it, when the server returns, when
// ctx is done, or when the returned stream is garbage collected unfinished.
func (c *Channel) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if c.streamClient != nil {
		return c.streamClient(ctx, desc, nil, method, c.streamer, opts...)
	}
	return c.newStream(ctx, desc, nil, method, opts...)
}

func (c *Channel) transfer() transfer {
	if c.xfer == nil {
		return protoTransfer{}
	}
	return c.xfer
}

// unaryTransfer is how a unary RPC's request and response cross.
func (c *Channel) unaryTransfer() copier {
	if c.unaryXfer == nil {
		return c.transfer()
	}
	return c.unaryXfer
}

func (c *Channel) bufferSize() int {
	if c.streamBuffer < 1 {
		return DefaultStreamBuffer
	}
	return c.streamBuffer
}
