// Package inprocgrpc is an in-process gRPC channel: a grpc.ClientConnInterface
// that is also a grpc.ServiceRegistrar, so that generated clients call
// services registered on the same Channel as if over a network, without one.
//
// Messages are copied, never serialized (unless WithCodec asks for a codec
// round trip), so that client and server never share a message, as they
// would not over a wire. Metadata, headers and trailers, deadlines,
// cancellation, status codes and interceptors behave as in grpc-go, and it
// passes grpchan's channel test suite (see ./conformance).
//
// It is built to be cheap, which is why it differs from the usual design
// (grpchan's inprocgrpc) in a few places:
//
//   - A unary RPC runs its handler on the caller's goroutine, interceptors
//     included: no goroutine, no channel, no hand-off. The price is that the
//     caller waits for a handler that ignores its context's deadline;
//     WithDetachedUnary restores the usual behaviour for such handlers.
//   - The server's context is one allocation that answers grpc's own lookups
//     (incoming metadata, the transport stream behind grpc.SetHeader, the
//     peer) and nothing else: the client's context values never reach the
//     server, only its deadline and cancellation.
//   - Messages whose types have generated copy code (vtprotobuf's CloneVT
//     and this module's protoc-gen-go-vtcopy) are copied by it, without
//     reflection; others by proto.Merge. A stream of such a type carries
//     each message across once: the sender copies it into a recycled
//     carrier in a bounded queue, and the receiver takes the carrier's
//     fields over. Other types are merged out of the carrier again.
//   - A receiver finding its queue empty polls it a few times, yielding in
//     between, before it parks: in a ping-pong the answer usually comes
//     first, and the park and wake-up it saves are most of a round trip.
//   - Handlers are resolved once, at registration, into a map keyed by the
//     full method name.
//
// Streams end, and their handler goroutines with them, when the handler
// returns, when the client's context ends, or when the client drops an
// unfinished stream (a cleanup cancels it once it is garbage collected).
package inprocgrpc
