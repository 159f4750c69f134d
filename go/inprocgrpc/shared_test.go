package inprocgrpc_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/grpcbench/grpcbench/go/inprocgrpc"
	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/leakcheck"
	gt "github.com/grpcbench/grpcbench/go/inprocgrpc/internal/testpb"
	pb "github.com/grpcbench/grpcbench/proto/echo"
)

// TestSharedUnaryMessages: with WithSharedUnaryMessages a unary RPC's
// messages cross the channel without a copy, in both directions: what the
// receiver reads is the sender's memory.
func TestSharedUnaryMessages(t *testing.T) {
	for _, mode := range modes {
		if !mode.shares {
			continue
		}
		t.Run(mode.name, func(t *testing.T) {
			leakcheck.Check(t)
			ctx := testContext(t)
			var gotReq *gt.Message
			resp := &gt.Message{Payload: make([]byte, 1<<20), Count: 2}
			srv := &testServer{
				unary: func(_ context.Context, m *gt.Message) (*gt.Message, error) {
					gotReq = m
					return resp, nil
				},
				serverStream: func(_ *gt.Message, st gt.TestService_ServerStreamServer) error {
					return st.Send(resp)
				},
			}
			cli := newClient(t, srv, mode.opts...)
			req := &gt.Message{Payload: make([]byte, 1<<20), Count: 1}

			got, err := cli.Unary(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			sameBytes(t, "unary request", gotReq.Payload, req.Payload)
			sameBytes(t, "unary response", got.Payload, resp.Payload)
			if gotReq == req || got == resp || gotReq.Count != 1 || got.Count != 2 {
				t.Fatalf("unary: request %p (sent %p), count %d; response %p (sent %p), count %d",
					gotReq, req, gotReq.Count, got, resp, got.Count)
			}

			// Streams still copy: grpc-go lets a sender change a message
			// as soon as Send returns.
			ss, err := cli.ServerStream(ctx, &gt.Message{})
			if err != nil {
				t.Fatal(err)
			}
			m, err := ss.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Payload) != len(resp.Payload) || &m.Payload[0] == &resp.Payload[0] {
				t.Fatalf("streamed response: %d bytes at %p, sent %d at %p; want a copy", len(m.Payload), m.Payload, len(resp.Payload), resp.Payload)
			}
		})
	}
}

// sameBytes fails the test unless got is want's memory, not a copy of it.
func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if len(got) != len(want) || len(got) > 0 && &got[0] != &want[0] {
		t.Fatalf("%s: received %d bytes at %p, sent %d at %p", what, len(got), got, len(want), want)
	}
}

// TestSharedUnaryMessagesCheckTypes: sharing needs protobuf messages of one
// type, as copying does; anything else is an Internal error, not a panic.
// A nil request arrives empty.
func TestSharedUnaryMessagesCheckTypes(t *testing.T) {
	ctx := testContext(t)
	echo := pb.NewEchoClient(echoChannel(inprocgrpc.WithSharedUnaryMessages()))
	if resp, err := echo.Echo(ctx, (*pb.EchoRequest)(nil)); err != nil || len(resp.Payload) != 0 {
		t.Fatalf("Echo(nil) = %v, %v", resp, err)
	}

	ch := inprocgrpc.New(inprocgrpc.WithSharedUnaryMessages())
	ch.RegisterService(&pointServiceDesc, doubler{})
	var out point
	wantCode(t, ch.Invoke(ctx, "/test.Points/Double", &point{1, 2}, &out), codes.Internal)

	gt.RegisterTestServiceServer(ch, &testServer{unary: func(context.Context, *gt.Message) (*gt.Message, error) {
		return &gt.Message{}, nil
	}})
	var wrong point
	wantCode(t, ch.Invoke(ctx, "/inprocgrpctest.TestService/Unary", &gt.Message{}, &wrong), codes.Internal)
}
