package inprocgrpc_test

import (
	"context"
	"testing"

	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/leakcheck"
	gt "github.com/grpcbench/grpcbench/go/inprocgrpc/internal/testpb"
)

// The tests below end streams in the ways a client can leave early, and
// check that the handler's goroutine ends every time.

func TestNoLeakWhenClientCancelsMidStream(t *testing.T) {
	leakcheck.Check(t)
	cli := newClient(t, endlessStreams())
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := cli.ServerStream(ctx, &gt.Message{})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := cli.BidiStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := ss.Recv(); err != nil {
			t.Fatal(err)
		}
		if _, err := bs.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
}

func TestNoLeakWhenClientReturnsEarly(t *testing.T) {
	leakcheck.Check(t)
	cli := newClient(t, endlessStreams())
	firstOnly := func() error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // the documented way to leave a stream early
		ss, err := cli.ServerStream(ctx, &gt.Message{})
		if err != nil {
			return err
		}
		_, err = ss.Recv()
		return err
	}
	for range 10 {
		if err := firstOnly(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNoLeakWhenClientAbandonsStream: a client that drops a stream without
// finishing it or cancelling its context (a bug grpc-go would leak on) does
// not leak here: the handle's cleanup ends the stream once it is collected.
func TestNoLeakWhenClientAbandonsStream(t *testing.T) {
	leakcheck.Check(t)
	cli := newClient(t, endlessStreams())
	abandon := func() {
		ss, err := cli.ServerStream(context.Background(), &gt.Message{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ss.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		abandon()
	}
}

// endlessStreams never ends a stream by itself.
func endlessStreams() *testServer {
	return &testServer{
		serverStream: func(_ *gt.Message, st gt.TestService_ServerStreamServer) error {
			for {
				if err := st.Send(&gt.Message{}); err != nil {
					return err
				}
			}
		},
		bidi: func(st gt.TestService_BidiStreamServer) error {
			for {
				if err := st.Send(&gt.Message{}); err != nil {
					return err
				}
			}
		},
	}
}
