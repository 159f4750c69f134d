package main

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpcbench/grpcbench/go/handlercost/wire"
)

// serviceDesc registers the three raw methods; the server's forced codec
// (wire.Codec) hands each handler the request's octets.
var serviceDesc = grpc.ServiceDesc{
	ServiceName: wire.Service,
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: wire.Fast, Handler: unary(func(context.Context, time.Duration) {})},
		{MethodName: wire.Sleep, Handler: unary(sleep)},
		{MethodName: wire.Spin, Handler: unary(spin)},
	},
}

// unary adapts work, given the duration the request asks for, to a method
// handler that answers with the request's octets.
func unary(work func(context.Context, time.Duration)) grpc.MethodHandler {
	return func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		var req []byte
		if err := dec(&req); err != nil {
			return nil, err
		}
		d, err := wire.Decode(req)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		work(ctx, d)
		return req, nil
	}
}

// sleep waits d on a timer, as a handler waits on I/O: no CPU meanwhile.
func sleep(_ context.Context, d time.Duration) {
	time.Sleep(d)
}

// spin keeps its CPU busy until d of wall time has passed.
func spin(_ context.Context, d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}
