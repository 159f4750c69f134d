package inprocgrpc

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
)

// DefaultStreamBuffer is how many messages (and a header) a stream queues in
// each direction before a sender blocks. A few messages of slack let sender
// and receiver run without waking each other for every message, while
// memory stays bounded, as HTTP/2 flow control bounds it over a network.
const DefaultStreamBuffer = 16

// An Option configures a Channel made by New.
type Option func(*options)

type options struct {
	unaryServer   []grpc.UnaryServerInterceptor
	streamServer  []grpc.StreamServerInterceptor
	unaryClient   []grpc.UnaryClientInterceptor
	streamClient  []grpc.StreamClientInterceptor
	codec         encoding.CodecV2
	streamBuffer  int
	detachedUnary bool
	sharedUnary   bool
	reflectOnly   bool
}

// WithServerUnaryInterceptors adds server interceptors for unary RPCs. They
// run in the order given, the first outermost, as with
// grpc.ChainUnaryInterceptor.
func WithServerUnaryInterceptors(i ...grpc.UnaryServerInterceptor) Option {
	return func(o *options) { o.unaryServer = append(o.unaryServer, i...) }
}

// WithServerStreamInterceptors adds server interceptors for streaming RPCs,
// the first outermost.
func WithServerStreamInterceptors(i ...grpc.StreamServerInterceptor) Option {
	return func(o *options) { o.streamServer = append(o.streamServer, i...) }
}

// WithClientUnaryInterceptors adds client interceptors for unary RPCs, the
// first outermost. They are given a nil *grpc.ClientConn: there is none.
func WithClientUnaryInterceptors(i ...grpc.UnaryClientInterceptor) Option {
	return func(o *options) { o.unaryClient = append(o.unaryClient, i...) }
}

// WithClientStreamInterceptors adds client interceptors for streaming RPCs,
// the first outermost. They are given a nil *grpc.ClientConn.
func WithClientStreamInterceptors(i ...grpc.StreamClientInterceptor) Option {
	return func(o *options) { o.streamClient = append(o.streamClient, i...) }
}

// WithCodec makes every message cross the channel as the codec's bytes:
// marshalled by the sender, unmarshalled by the receiver, as over a network.
// It is slower than the default copy, and it is the way to carry messages
// that are not protobuf messages. For the usual wire format use
// encoding.GetCodecV2("proto").
func WithCodec(c encoding.CodecV2) Option {
	return func(o *options) { o.codec = c }
}

// WithStreamBuffer sets how many messages a stream queues in each direction
// before the sender blocks (see DefaultStreamBuffer). It is at least 1.
func WithStreamBuffer(n int) Option {
	return func(o *options) { o.streamBuffer = max(n, 1) }
}

// WithDetachedUnary runs unary handlers on a goroutine of their own, so that
// a caller returns at its deadline or cancellation even when the handler
// does not watch its context. It costs a goroutine and a channel per call;
// by default handlers run on the caller's goroutine.
func WithDetachedUnary() Option {
	return func(o *options) { o.detachedUnary = true }
}

// WithSharedUnaryMessages hands a unary RPC's request to the handler, and
// its response to the caller, without copying them: the message received
// refers to the memory of the one sent (its bytes, strings, sub-messages,
// lists and maps). A large message then costs no more than a small one. It
// changes the contract of every unary RPC on the channel, and is off by
// default:
//
//   - a caller must not change a request once it has passed it to Invoke
//     (a generated client's method), not even after the call returned;
//   - a handler must not change a response once it has returned it;
//   - neither side may change a message it received, nor anything it refers
//     to, since the sender's message is the same memory.
//
// Services whose messages both sides treat as immutable values can use it;
// a handler that edits its request in place, or a cache of responses that is
// updated in place, must not. Stream messages are still copied, since
// grpc-go lets a sender reuse a message as soon as Send returns. With
// WithCodec, messages are encoded and this option has no effect.
func WithSharedUnaryMessages() Option {
	return func(o *options) { o.sharedUnary = true }
}

// WithoutGeneratedClones copies every message with proto.Merge, as grpchan
// and grpc-go's own code do, even where its type has generated clone code
// (vtprotobuf's CloneVT), which the channel otherwise uses: to compare the
// two, or to rule the generated code out.
func WithoutGeneratedClones() Option {
	return func(o *options) { o.reflectOnly = true }
}
