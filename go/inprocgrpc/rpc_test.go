package inprocgrpc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/grpcbench/grpcbench/go/inprocgrpc"
	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/echoservice"
	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/leakcheck"
	gt "github.com/grpcbench/grpcbench/go/inprocgrpc/internal/testpb"
	pb "github.com/grpcbench/grpcbench/proto/echo"
)

// modes are the channel configurations every RPC shape is tested in.
var modes = []struct {
	name   string
	opts   []inprocgrpc.Option
	shares bool // client and server share messages (WithSharedUnaryMessages)
}{
	{"copy", nil, false},
	{"codec", []inprocgrpc.Option{inprocgrpc.WithCodec(encoding.GetCodecV2("proto"))}, false},
	{"detached", []inprocgrpc.Option{inprocgrpc.WithDetachedUnary(), inprocgrpc.WithStreamBuffer(1)}, false},
	{"shared", []inprocgrpc.Option{inprocgrpc.WithSharedUnaryMessages()}, true},
	{"shared-detached", []inprocgrpc.Option{inprocgrpc.WithSharedUnaryMessages(), inprocgrpc.WithDetachedUnary()}, true},
}

func TestRPCShapes(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			leakcheck.Check(t)
			ctx := testContext(t)
			srv := &testServer{
				unary: func(_ context.Context, m *gt.Message) (*gt.Message, error) {
					// A new payload: in the shared modes the request's is
					// the client's memory, which a handler must not write.
					return &gt.Message{Payload: slices.Concat(m.Payload, []byte("!")), Count: m.Count + 1}, nil
				},
				clientStream: func(st gt.TestService_ClientStreamServer) error {
					var sum int32
					for {
						m, err := st.Recv()
						if err == io.EOF {
							return st.SendAndClose(&gt.Message{Count: sum})
						}
						if err != nil {
							return err
						}
						sum += m.Count
					}
				},
				serverStream: func(m *gt.Message, st gt.TestService_ServerStreamServer) error {
					for i := range m.Count {
						if err := st.Send(&gt.Message{Count: i}); err != nil {
							return err
						}
					}
					return nil
				},
				bidi: func(st gt.TestService_BidiStreamServer) error {
					for {
						m, err := st.Recv()
						if err == io.EOF {
							return nil
						}
						if err != nil {
							return err
						}
						if err := st.Send(&gt.Message{Count: m.Count * 2}); err != nil {
							return err
						}
					}
				},
			}
			cli := newClient(t, srv, mode.opts...)

			resp, err := cli.Unary(ctx, &gt.Message{Payload: []byte("hi"), Count: 41})
			if err != nil || string(resp.Payload) != "hi!" || resp.Count != 42 {
				t.Fatalf("Unary = %v, %v", resp, err)
			}

			cs, err := cli.ClientStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := int32(1); i <= 10; i++ {
				if err := cs.Send(&gt.Message{Count: i}); err != nil {
					t.Fatal(err)
				}
			}
			if resp, err := cs.CloseAndRecv(); err != nil || resp.Count != 55 {
				t.Fatalf("ClientStream = %v, %v", resp, err)
			}

			ss, err := cli.ServerStream(ctx, &gt.Message{Count: 50})
			if err != nil {
				t.Fatal(err)
			}
			for i := range int32(50) {
				m, err := ss.Recv()
				if err != nil || m.Count != i {
					t.Fatalf("ServerStream message %d = %v, %v", i, m, err)
				}
			}
			if _, err := ss.Recv(); err != io.EOF {
				t.Fatalf("ServerStream end = %v, want io.EOF", err)
			}

			bs, err := cli.BidiStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range int32(20) {
				if err := bs.Send(&gt.Message{Count: i}); err != nil {
					t.Fatal(err)
				}
				if m, err := bs.Recv(); err != nil || m.Count != 2*i {
					t.Fatalf("Bidi reply %d = %v, %v", i, m, err)
				}
			}
			bs.CloseSend()
			if _, err := bs.Recv(); err != io.EOF {
				t.Fatalf("Bidi end = %v, want io.EOF", err)
			}
		})
	}
}

// TestFullDuplex sends and receives on separate goroutines, as grpc allows,
// with more messages in flight than the queues hold.
func TestFullDuplex(t *testing.T) {
	leakcheck.Check(t)
	ctx := testContext(t)
	cli := pb.NewEchoClient(echoChannel())
	st, err := cli.Bidi(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	sendErr := make(chan error, 1)
	go func() {
		for i := range n {
			if err := st.Send(&pb.EchoRequest{Payload: []byte(fmt.Sprint(i))}); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- st.CloseSend()
	}()
	for i := range n {
		m, err := st.Recv()
		if err != nil || string(m.Payload) != fmt.Sprint(i) {
			t.Fatalf("reply %d = %v, %v", i, m, err)
		}
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Fatalf("end = %v, want io.EOF", err)
	}
	if err := receive(t, sendErr, "the sender"); err != nil {
		t.Fatal(err)
	}
}

func echoChannel(opts ...inprocgrpc.Option) *inprocgrpc.Channel {
	ch := inprocgrpc.New(opts...)
	pb.RegisterEchoServer(ch, echoservice.Server{})
	return ch
}

// TestMessagesAreCopied checks that client and server never share a
// message: each may change or keep what it sent or received.
func TestMessagesAreCopied(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := testContext(t)
			var kept *gt.Message
			shared := &gt.Message{Payload: []byte("server")}
			srv := &testServer{
				unary: func(_ context.Context, m *gt.Message) (*gt.Message, error) {
					kept = m
					return shared, nil // a response the server keeps using
				},
				serverStream: func(_ *gt.Message, st gt.TestService_ServerStreamServer) error {
					m := &gt.Message{}
					for i := range int32(3) {
						m.Count = i // the same message, changed after each Send
						if err := st.Send(m); err != nil {
							return err
						}
					}
					return nil
				},
			}
			cli := newClient(t, srv, mode.opts...)

			if !mode.shares { // sharing unary messages is the point there (TestSharedUnaryMessages)
				req := &gt.Message{Payload: []byte("client")}
				resp, err := cli.Unary(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				req.Payload[0] = 'X'
				resp.Payload[0] = 'Y'
				if string(kept.Payload) != "client" || string(shared.Payload) != "server" {
					t.Fatalf("a side saw the other's change: server kept %q, server's response %q", kept.Payload, shared.Payload)
				}
				if resp == shared {
					t.Fatal("the client got the server's response message itself")
				}
			}

			ss, err := cli.ServerStream(ctx, &gt.Message{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range int32(3) {
				if m, err := ss.Recv(); err != nil || m.Count != i {
					t.Fatalf("message %d = %v, %v: not the value at the time of Send", i, m, err)
				}
			}
		})
	}
}

func TestUnimplemented(t *testing.T) {
	ctx := testContext(t)
	ch := inprocgrpc.New()
	gt.RegisterTestServiceServer(ch, &testServer{}) // every method unimplemented by the server
	cli := gt.NewTestServiceClient(ch)

	_, err := cli.Unary(ctx, &gt.Message{})
	wantCode(t, err, codes.Unimplemented) // from the server's Unimplemented stub

	for _, method := range []string{"/nope.Service/Method", "/inprocgrpctest.TestService/Nope"} {
		err := ch.Invoke(ctx, method, &gt.Message{}, &gt.Message{})
		wantCode(t, err, codes.Unimplemented)
		_, err = ch.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, method)
		wantCode(t, err, codes.Unimplemented)
	}
}

func TestStatusCodes(t *testing.T) {
	ctx := testContext(t)
	detail, _ := anypb.New(wrapperspb.String("why"))
	errWithDetails := status.FromProto(status.New(codes.FailedPrecondition, "no").Proto())
	errWithDetails, _ = errWithDetails.WithDetails(wrapperspb.String("why"))
	for _, tc := range []struct {
		name string
		err  error
		want codes.Code
	}{
		{"plain error", errors.New("boom"), codes.Unknown},
		{"status", status.Error(codes.NotFound, "gone"), codes.NotFound},
		{"wrapped status", fmt.Errorf("wrapped: %w", status.Error(codes.Aborted, "x")), codes.Aborted},
		{"context canceled", context.Canceled, codes.Canceled},
		{"deadline exceeded", context.DeadlineExceeded, codes.DeadlineExceeded},
		{"details", errWithDetails.Err(), codes.FailedPrecondition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli := newClient(t, &testServer{
				unary: func(context.Context, *gt.Message) (*gt.Message, error) { return nil, tc.err },
				serverStream: func(*gt.Message, gt.TestService_ServerStreamServer) error {
					return tc.err
				},
			})
			_, err := cli.Unary(ctx, &gt.Message{})
			wantCode(t, err, tc.want)
			if tc.name == "details" {
				got := status.Convert(err).Proto().Details
				if len(got) != 1 || !proto.Equal(got[0], detail) {
					t.Fatalf("details = %v, want [%v]", got, detail)
				}
			}
			ss, err := cli.ServerStream(ctx, &gt.Message{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = ss.Recv()
			wantCode(t, err, tc.want)
		})
	}
}

// TestCrossShapeCalls checks the generic paths: a unary method through
// NewStream, a streaming method through Invoke, as grpc-go allows.
func TestCrossShapeCalls(t *testing.T) {
	ctx := testContext(t)
	ch := echoChannel()
	st, err := ch.NewStream(ctx, &grpc.StreamDesc{}, pb.Echo_Echo_FullMethodName)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendMsg(&pb.EchoRequest{Payload: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	st.CloseSend()
	var resp pb.EchoResponse
	if err := st.RecvMsg(&resp); err != nil || string(resp.Payload) != "a" {
		t.Fatalf("unary through NewStream = %v, %v", &resp, err)
	}

	resp.Reset()
	err = ch.Invoke(ctx, pb.Echo_Bidi_FullMethodName, &pb.EchoRequest{Payload: []byte("b")}, &resp)
	if err != nil || string(resp.Payload) != "b" {
		t.Fatalf("bidi through Invoke = %v, %v", &resp, err)
	}
	// A server stream of two answers a call that wants one: cardinality.
	err = ch.Invoke(ctx, pb.Echo_ServerStream_FullMethodName, &pb.StreamRequest{Count: 2}, &resp)
	wantCode(t, err, codes.Internal)
}

func TestRegisterService(t *testing.T) {
	ch := echoChannel()
	info := ch.GetServiceInfo()["echo.Echo"]
	if len(info.Methods) != 3 {
		t.Fatalf("service info = %+v, want 3 methods", info)
	}
	mustPanic(t, "a duplicate service", func() { pb.RegisterEchoServer(ch, echoservice.Server{}) })
	mustPanic(t, "a wrong implementation", func() { ch.RegisterService(&pb.Echo_ServiceDesc, struct{}{}) })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("registering %s did not panic", what)
		}
	}()
	f()
}

// TestNilAndEmptyMessages: a nil message travels as an empty one, as it
// does over the wire.
func TestNilAndEmptyMessages(t *testing.T) {
	ctx := testContext(t)
	cli := pb.NewEchoClient(echoChannel())
	resp, err := cli.Echo(ctx, (*pb.EchoRequest)(nil))
	if err != nil || len(resp.Payload) != 0 {
		t.Fatalf("Echo(nil) = %v, %v", resp, err)
	}
	resp, err = cli.Echo(ctx, &pb.EchoRequest{Payload: bytes.Repeat([]byte{1}, 1<<20)})
	if err != nil || len(resp.Payload) != 1<<20 {
		t.Fatalf("Echo(1 MiB) = %d bytes, %v", len(resp.GetPayload()), err)
	}
}

// TestDecodeTwice: a handler may call its dec function more than once, as
// with grpc-go, in every mode; each call yields the request.
func TestDecodeTwice(t *testing.T) {
	desc := grpc.ServiceDesc{
		ServiceName: "test.Twice",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Call",
			Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				var a, b gt.Message
				if err := dec(&a); err != nil {
					return nil, err
				}
				if err := dec(&b); err != nil {
					return nil, err
				}
				if !proto.Equal(&a, &b) {
					return nil, status.Errorf(codes.Internal, "decoded %v, then %v", &a, &b)
				}
				return &a, nil
			},
		}},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ch := inprocgrpc.New(mode.opts...)
			ch.RegisterService(&desc, struct{}{})
			var out gt.Message
			err := ch.Invoke(testContext(t), "/test.Twice/Call", &gt.Message{Payload: []byte("x"), Count: 3}, &out)
			if err != nil || out.Count != 3 || string(out.Payload) != "x" {
				t.Fatalf("Call = %v, %v", &out, err)
			}
		})
	}
}

// TestStreamMisuse: sending after CloseSend fails instead of panicking, and
// the call options are filled at the end of a stream.
func TestStreamMisuse(t *testing.T) {
	ctx := testContext(t)
	var p peer.Peer
	st, err := pb.NewEchoClient(echoChannel()).Bidi(ctx, grpc.Peer(&p))
	if err != nil {
		t.Fatal(err)
	}
	st.CloseSend()
	st.CloseSend() // twice is fine
	if err := st.Send(&pb.EchoRequest{}); err == nil {
		t.Fatal("Send after CloseSend succeeded")
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Fatalf("end = %v, want io.EOF", err)
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Fatalf("Recv after the end = %v, want io.EOF again", err)
	}
	if p.Addr == nil {
		t.Fatal("grpc.Peer was not filled")
	}
}
