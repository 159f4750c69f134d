package inprocgrpc_test

import (
	"context"
	"io"
	"reflect"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/grpcbench/grpcbench/go/inprocgrpc"
	gt "github.com/grpcbench/grpcbench/go/inprocgrpc/internal/testpb"
)

// recorder collects the order in which interceptors and handlers run.
type recorder struct {
	mu    sync.Mutex
	steps []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.steps = append(r.steps, s)
	r.mu.Unlock()
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.steps
	r.steps = nil
	return s
}

func TestInterceptorOrder(t *testing.T) {
	ctx := testContext(t)
	var rec recorder
	unaryServer := func(name string) grpc.UnaryServerInterceptor {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			rec.add(name + " " + info.FullMethod)
			return h(ctx, req)
		}
	}
	streamServer := func(name string) grpc.StreamServerInterceptor {
		return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			rec.add(name + " " + info.FullMethod)
			return h(srv, ss)
		}
	}
	unaryClient := func(name string) grpc.UnaryClientInterceptor {
		return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			rec.add(name)
			return inv(ctx, method, req, reply, cc, opts...)
		}
	}
	streamClient := func(name string) grpc.StreamClientInterceptor {
		return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, s grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			rec.add(name)
			return s(ctx, desc, cc, method, opts...)
		}
	}
	cli := newClient(t, &testServer{
		unary: func(context.Context, *gt.Message) (*gt.Message, error) {
			rec.add("handler")
			return &gt.Message{}, nil
		},
		bidi: func(gt.TestService_BidiStreamServer) error {
			rec.add("handler")
			return nil
		},
	},
		inprocgrpc.WithClientUnaryInterceptors(unaryClient("c1"), unaryClient("c2")),
		inprocgrpc.WithClientStreamInterceptors(streamClient("c1"), streamClient("c2")),
		inprocgrpc.WithServerUnaryInterceptors(unaryServer("s1"), unaryServer("s2")),
		inprocgrpc.WithServerStreamInterceptors(streamServer("s1"), streamServer("s2"), streamServer("s3")),
	)

	if _, err := cli.Unary(ctx, &gt.Message{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"c1", "c2", "s1 /inprocgrpctest.TestService/Unary", "s2 /inprocgrpctest.TestService/Unary", "handler"}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("unary order = %q, want %q", got, want)
	}

	st, err := cli.BidiStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Fatal(err)
	}
	const m = " /inprocgrpctest.TestService/BidiStream"
	want = []string{"c1", "c2", "s1" + m, "s2" + m, "s3" + m, "handler"}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("stream order = %q, want %q", got, want)
	}
}

// TestSingleInterceptors covers the unchained path of each kind.
func TestSingleInterceptors(t *testing.T) {
	ctx := testContext(t)
	calls := 0
	cli := newClient(t, &testServer{
		unary: func(context.Context, *gt.Message) (*gt.Message, error) { return &gt.Message{}, nil },
	},
		inprocgrpc.WithClientUnaryInterceptors(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			calls++
			return inv(ctx, method, req, reply, cc, opts...)
		}),
		inprocgrpc.WithServerUnaryInterceptors(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			calls++
			return h(ctx, req)
		}),
	)
	if _, err := cli.Unary(ctx, &gt.Message{}); err != nil || calls != 2 {
		t.Fatalf("Unary: %v, %d interceptor calls, want 2", err, calls)
	}
}
