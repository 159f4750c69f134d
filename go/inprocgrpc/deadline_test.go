package inprocgrpc_test

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpcbench/grpcbench/go/inprocgrpc"
	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/leakcheck"
	gt "github.com/grpcbench/grpcbench/go/inprocgrpc/internal/testpb"
)

// The tests here never assert on elapsed time: they wait for events, with
// bounds only against hanging.

// TestDeadlineReachesServer: the client's deadline is the server's, and the
// server sees it expire.
func TestDeadlineReachesServer(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			leakcheck.Check(t)
			seen := make(chan error, 2)
			wantDeadline := time.Now().Add(50 * time.Millisecond)
			wait := func(ctx context.Context) error {
				if d, ok := ctx.Deadline(); !ok || !d.Equal(wantDeadline) {
					t.Errorf("server deadline = %v, %v; want %v", d, ok, wantDeadline)
				}
				<-ctx.Done()
				seen <- ctx.Err()
				return ctx.Err()
			}
			cli := newClient(t, &testServer{
				unary: func(ctx context.Context, _ *gt.Message) (*gt.Message, error) { return nil, wait(ctx) },
				bidi:  func(st gt.TestService_BidiStreamServer) error { return wait(st.Context()) },
			}, mode.opts...)
			// Each call gets the same deadline: the server must see exactly it.
			ctx, cancel := context.WithDeadline(testContext(t), wantDeadline)
			defer cancel()
			_, err := cli.Unary(ctx, &gt.Message{})
			wantCode(t, err, codes.DeadlineExceeded)

			wantDeadline = time.Now().Add(50 * time.Millisecond)
			ctx, cancel = context.WithDeadline(testContext(t), wantDeadline)
			defer cancel()
			st, err := cli.BidiStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.Recv()
			wantCode(t, err, codes.DeadlineExceeded)
			for range 2 {
				if err := receive(t, seen, "the server"); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("server context ended with %v, want DeadlineExceeded", err)
				}
			}
		})
	}
}

// TestCancelReachesServer: a client's cancellation ends the server's context
// wherever the handler waits: on the context, in Recv, or in Send.
func TestCancelReachesServer(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			leakcheck.Check(t)
			started := make(chan struct{}, 1)
			ended := make(chan error, 1)
			cli := newClient(t, &testServer{
				unary: func(ctx context.Context, _ *gt.Message) (*gt.Message, error) {
					started <- struct{}{}
					<-ctx.Done()
					ended <- ctx.Err()
					return nil, ctx.Err()
				},
				clientStream: func(st gt.TestService_ClientStreamServer) error {
					started <- struct{}{}
					_, err := st.Recv() // the client sends nothing
					ended <- err
					return err
				},
				serverStream: func(_ *gt.Message, st gt.TestService_ServerStreamServer) error {
					started <- struct{}{}
					for { // the client reads nothing: Send blocks once the queue is full
						if err := st.Send(&gt.Message{}); err != nil {
							ended <- err
							return err
						}
					}
				},
			}, mode.opts...)

			calls := []struct {
				name string
				call func(ctx context.Context) error
			}{
				{"unary", func(ctx context.Context) error { _, err := cli.Unary(ctx, &gt.Message{}); return err }},
				{"recv", func(ctx context.Context) error {
					st, err := cli.ClientStream(ctx)
					if err != nil {
						return err
					}
					_, err = st.Header() // waits, without closing the send side
					return err
				}},
				{"send", func(ctx context.Context) error {
					st, err := cli.ServerStream(ctx, &gt.Message{})
					if err != nil {
						return err
					}
					<-ctx.Done()
					_, err = st.Recv()
					return err
				}},
			}
			for _, tc := range calls {
				call := tc.call
				t.Run(tc.name, func(t *testing.T) {
					ctx, cancel := context.WithCancel(testContext(t))
					go func() {
						<-started
						cancel()
					}()
					wantCode(t, call(ctx), codes.Canceled)
					err := receive(t, ended, "the handler")
					if !errors.Is(err, context.Canceled) && status.Code(err) != codes.Canceled {
						t.Fatalf("handler ended with %v, want Canceled", err)
					}
				})
			}
		})
	}
}

// TestServerContextEndsWithRPC: once a handler returns, its context is
// done, as a grpc.Server's is, so that work it started stops.
func TestServerContextEndsWithRPC(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			leakcheck.Check(t)
			ctx := testContext(t)
			stopped := make(chan error, 2)
			background := func(ctx context.Context) {
				go func() {
					<-ctx.Done()
					stopped <- ctx.Err()
				}()
			}
			cli := newClient(t, &testServer{
				unary: func(ctx context.Context, _ *gt.Message) (*gt.Message, error) {
					background(ctx)
					return &gt.Message{}, nil
				},
				bidi: func(st gt.TestService_BidiStreamServer) error {
					background(st.Context())
					return nil
				},
			}, mode.opts...)
			if _, err := cli.Unary(ctx, &gt.Message{}); err != nil {
				t.Fatal(err)
			}
			st, err := cli.BidiStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Recv(); err != io.EOF {
				t.Fatal(err)
			}
			for range 2 {
				if err := receive(t, stopped, "the handler's context to end"); !errors.Is(err, context.Canceled) {
					t.Fatalf("handler context ended with %v, want Canceled", err)
				}
			}
		})
	}
}

// TestServerEndReachesClient: a handler that returns while its client is
// still sending ends the client's stream: Send stops blocking (io.EOF, as
// in grpc-go) and the status arrives.
func TestServerEndReachesClient(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			leakcheck.Check(t)
			ctx := testContext(t)
			cli := newClient(t, &testServer{
				clientStream: func(st gt.TestService_ClientStreamServer) error {
					if _, err := st.Recv(); err != nil {
						return err
					}
					return status.Error(codes.ResourceExhausted, "enough")
				},
			}, mode.opts...)
			st, err := cli.ClientStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// More than any queue holds: without the server's end reaching
			// it, this would block forever.
			for i := 0; ; i++ {
				if err := st.Send(&gt.Message{}); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("Send %d = %v, want nil or io.EOF", i, err)
				}
			}
			_, err = st.CloseAndRecv()
			wantCode(t, err, codes.ResourceExhausted)
		})
	}
}

// TestDetachedUnaryLeavesAtDeadline: with WithDetachedUnary, a caller gets
// DeadlineExceeded even from a handler that ignores its context.
func TestDetachedUnaryLeavesAtDeadline(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	defer close(release)
	cli := newClient(t, &testServer{
		unary: func(context.Context, *gt.Message) (*gt.Message, error) {
			<-release
			return &gt.Message{}, nil
		},
	}, modes[2].opts...)
	ctx, cancel := context.WithTimeout(testContext(t), 20*time.Millisecond)
	defer cancel()
	_, err := cli.Unary(ctx, &gt.Message{})
	wantCode(t, err, codes.DeadlineExceeded)
}

// TestDerivedContextsStartNoGoroutine: contexts a handler derives hook into
// the server context directly (it implements AfterFunc), so deriving many
// starts no watcher goroutine, and they still end with the RPC.
func TestDerivedContextsStartNoGoroutine(t *testing.T) {
	leakcheck.Check(t)
	ctx, cancel := context.WithCancel(testContext(t))
	derived := make(chan context.Context, 1)
	cli := newClient(t, &testServer{
		unary: func(ctx context.Context, _ *gt.Message) (*gt.Message, error) {
			before := runtime.NumGoroutine()
			for range 100 {
				_, c := context.WithTimeout(ctx, time.Hour)
				c() // and forgotten again (see afterFunc.stop)
			}
			kept, c := context.WithCancel(ctx)
			defer c()
			if n := runtime.NumGoroutine(); n > before {
				t.Errorf("deriving contexts started %d goroutines", n-before)
			}
			derived <- kept
			<-kept.Done() // ends when the client cancels
			return nil, kept.Err()
		},
	})
	go func() {
		receive(t, derived, "the handler")
		cancel()
	}()
	_, err := cli.Unary(ctx, &gt.Message{})
	wantCode(t, err, codes.Canceled)
}

// TestDetachedHandlerCannotReadALeftRequest: a detached handler reads the
// caller's request in place, but only while the caller waits. Once the
// caller left at its deadline and changes its request, a late dec fails
// with the caller's status instead of reading it (the race detector would
// see a read of the changing message).
func TestDetachedHandlerCannotReadALeftRequest(t *testing.T) {
	leakcheck.Check(t)
	ch := inprocgrpc.New(inprocgrpc.WithDetachedUnary())
	release := make(chan struct{})
	decoded := make(chan error, 2)
	ch.RegisterService(&grpc.ServiceDesc{
		ServiceName: "late.Decoder",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Decode",
			Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				<-release
				err := dec(&gt.Message{})
				decoded <- err
				decoded <- dec(&gt.Message{}) // a second dec fails the same way
				return nil, err
			},
		}},
	}, struct{}{})
	ctx, cancel := context.WithTimeout(testContext(t), 20*time.Millisecond)
	defer cancel()
	req := &gt.Message{Payload: []byte("before")}
	err := ch.Invoke(ctx, "/late.Decoder/Decode", req, &gt.Message{})
	wantCode(t, err, codes.DeadlineExceeded)
	req.Payload = []byte("changed after the caller left")
	close(release)
	for range 2 {
		wantCode(t, receive(t, decoded, "the handler's dec"), codes.DeadlineExceeded)
	}
}
