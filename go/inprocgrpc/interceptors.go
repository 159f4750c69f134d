package inprocgrpc

import (
	"context"

	"google.golang.org/grpc"
)

// The chains below nest interceptors the way grpc's Chain*Interceptor
// options do: the first is outermost. A single interceptor is used as is, so
// that the common case adds no closure per call.

func chainUnaryServer(ints []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	switch len(ints) {
	case 0:
		return nil
	case 1:
		return ints[0]
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return ints[0](ctx, req, info, unaryServerNext(ints, 1, info, handler))
	}
}

func unaryServerNext(ints []grpc.UnaryServerInterceptor, i int, info *grpc.UnaryServerInfo, final grpc.UnaryHandler) grpc.UnaryHandler {
	if i == len(ints) {
		return final
	}
	return func(ctx context.Context, req any) (any, error) {
		return ints[i](ctx, req, info, unaryServerNext(ints, i+1, info, final))
	}
}

func chainStreamServer(ints []grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	switch len(ints) {
	case 0:
		return nil
	case 1:
		return ints[0]
	}
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return ints[0](srv, ss, info, streamServerNext(ints, 1, info, handler))
	}
}

func streamServerNext(ints []grpc.StreamServerInterceptor, i int, info *grpc.StreamServerInfo, final grpc.StreamHandler) grpc.StreamHandler {
	if i == len(ints) {
		return final
	}
	return func(srv any, ss grpc.ServerStream) error {
		return ints[i](srv, ss, info, streamServerNext(ints, i+1, info, final))
	}
}

func chainUnaryClient(ints []grpc.UnaryClientInterceptor) grpc.UnaryClientInterceptor {
	switch len(ints) {
	case 0:
		return nil
	case 1:
		return ints[0]
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return ints[0](ctx, method, req, reply, cc, unaryClientNext(ints, 1, invoker), opts...)
	}
}

func unaryClientNext(ints []grpc.UnaryClientInterceptor, i int, final grpc.UnaryInvoker) grpc.UnaryInvoker {
	if i == len(ints) {
		return final
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		return ints[i](ctx, method, req, reply, cc, unaryClientNext(ints, i+1, final), opts...)
	}
}

func chainStreamClient(ints []grpc.StreamClientInterceptor) grpc.StreamClientInterceptor {
	switch len(ints) {
	case 0:
		return nil
	case 1:
		return ints[0]
	}
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return ints[0](ctx, desc, cc, method, streamClientNext(ints, 1, streamer), opts...)
	}
}

func streamClientNext(ints []grpc.StreamClientInterceptor, i int, final grpc.Streamer) grpc.Streamer {
	if i == len(ints) {
		return final
	}
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return ints[i](ctx, desc, cc, method, streamClientNext(ints, i+1, final), opts...)
	}
}
