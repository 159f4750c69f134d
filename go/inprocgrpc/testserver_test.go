package inprocgrpc_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpcbench/grpcbench/go/inprocgrpc"
	gt "github.com/grpcbench/grpcbench/go/inprocgrpc/internal/testpb"
)

// testServer implements grpchan's TestService, which has all four RPC
// shapes, with per-test functions; a method left nil is Unimplemented.
type testServer struct {
	gt.UnimplementedTestServiceServer
	unary        func(context.Context, *gt.Message) (*gt.Message, error)
	clientStream func(gt.TestService_ClientStreamServer) error
	serverStream func(*gt.Message, gt.TestService_ServerStreamServer) error
	bidi         func(gt.TestService_BidiStreamServer) error
}

func (s *testServer) Unary(ctx context.Context, m *gt.Message) (*gt.Message, error) {
	if s.unary == nil {
		return s.UnimplementedTestServiceServer.Unary(ctx, m)
	}
	return s.unary(ctx, m)
}

func (s *testServer) ClientStream(st gt.TestService_ClientStreamServer) error {
	if s.clientStream == nil {
		return s.UnimplementedTestServiceServer.ClientStream(st)
	}
	return s.clientStream(st)
}

func (s *testServer) ServerStream(m *gt.Message, st gt.TestService_ServerStreamServer) error {
	if s.serverStream == nil {
		return s.UnimplementedTestServiceServer.ServerStream(m, st)
	}
	return s.serverStream(m, st)
}

func (s *testServer) BidiStream(st gt.TestService_BidiStreamServer) error {
	if s.bidi == nil {
		return s.UnimplementedTestServiceServer.BidiStream(st)
	}
	return s.bidi(st)
}

// newClient registers srv on a new Channel made with opts and returns a
// client of it.
func newClient(t *testing.T, srv *testServer, opts ...inprocgrpc.Option) gt.TestServiceClient {
	t.Helper()
	ch := inprocgrpc.New(opts...)
	gt.RegisterTestServiceServer(ch, srv)
	return gt.NewTestServiceClient(ch)
}

// testContext bounds a test: a bug shows up as a failure, not a hung test.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wantCode fails the test unless err is a status error with code want.
func wantCode(t *testing.T, err error, want codes.Code) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != want {
		t.Fatalf("got error %v, want code %v", err, want)
	}
}

// receive waits for a value from c, failing the test after a generous
// bound instead of hanging.
func receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

var _ grpc.ClientConnInterface = (*inprocgrpc.Channel)(nil)

func statusFromCode(c int32) error { return status.Error(codes.Code(c), "requested failure") }
