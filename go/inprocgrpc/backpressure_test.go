package inprocgrpc_test

import (
	"context"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/grpcbench/grpcbench/go/inprocgrpc"
	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/leakcheck"
	gt "github.com/grpcbench/grpcbench/go/inprocgrpc/internal/testpb"
)

const testBuffer = 4

// waitFor polls cond until it holds, failing after a generous bound: it
// waits for progress and never asserts on time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// settle gives a sender that wrongly does not block every chance to run
// past its bound. It only makes a broken bound visible; it cannot fail a
// correct one however slow the machine.
func settle() {
	for range 100 {
		runtime.Gosched()
	}
	time.Sleep(10 * time.Millisecond)
}

// TestServerSendBlocks: a handler sending faster than its client receives
// blocks once the stream's buffer is full; at every point it is at most the
// buffer ahead of the client.
func TestServerSendBlocks(t *testing.T) {
	leakcheck.Check(t)
	var sent atomic.Int64
	cli := newClient(t, &testServer{
		serverStream: func(_ *gt.Message, st gt.TestService_ServerStreamServer) error {
			for {
				if err := st.Send(&gt.Message{}); err != nil {
					return err
				}
				sent.Add(1)
			}
		},
	}, inprocgrpc.WithStreamBuffer(testBuffer))
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	st, err := cli.ServerStream(ctx, &gt.Message{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the queue to fill", func() bool { return sent.Load() >= testBuffer })
	settle()
	if n := sent.Load(); n != testBuffer {
		t.Fatalf("the handler sent %d messages to a client that read none; the bound is %d", n, testBuffer)
	}
	for received := int64(1); received <= 100; received++ {
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
		if n := sent.Load(); n > received+testBuffer {
			t.Fatalf("after %d received, %d sent: more than %d ahead", received, n, testBuffer)
		}
	}
	cancel()
	_, err = st.Recv()
	wantCode(t, err, codes.Canceled)
}

// TestClientSendBlocks: the same bound from client to server.
func TestClientSendBlocks(t *testing.T) {
	leakcheck.Check(t)
	release := make(chan struct{})
	var received atomic.Int64
	cli := newClient(t, &testServer{
		clientStream: func(st gt.TestService_ClientStreamServer) error {
			<-release
			for {
				if _, err := st.Recv(); err != nil {
					return err
				}
				received.Add(1)
			}
		},
	}, inprocgrpc.WithStreamBuffer(testBuffer))
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	st, err := cli.ClientStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	sendErr := make(chan error, 1)
	go func() {
		for {
			if err := st.Send(&gt.Message{}); err != nil {
				// As with grpc-go, Send reports io.EOF when the stream
				// ended on the server's side first (its Recv saw the
				// cancellation and the handler returned); the status
				// is then the one CloseAndRecv reports.
				if err == io.EOF {
					_, err = st.CloseAndRecv()
				}
				sendErr <- err
				return
			}
			// The server counts a message after taking it from the
			// queue, so one more may be in its hands, uncounted.
			if n, r := sent.Add(1), received.Load(); n > r+testBuffer+1 {
				t.Errorf("%d sent, %d received: more than %d ahead", n, r, testBuffer+1)
			}
		}
	}()
	waitFor(t, "the queue to fill", func() bool { return sent.Load() >= testBuffer })
	settle()
	if n := sent.Load(); n != testBuffer {
		t.Fatalf("the client sent %d messages to a server that read none; the bound is %d", n, testBuffer)
	}
	close(release)
	waitFor(t, "more messages to flow", func() bool { return received.Load() >= 100 })
	cancel()
	wantCode(t, receive(t, sendErr, "the sender to stop"), codes.Canceled)
}
