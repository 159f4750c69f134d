package inprocgrpc

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

func newTestServerContext(parent context.Context) *serverContext {
	c := &serverContext{}
	c.init(parent, "/s/m", nil)
	return c
}

func TestGRPCKeysFound(t *testing.T) {
	if !grpcKeys.ok {
		t.Fatal("grpc's context keys were not found: every call now pays for three WithValue layers")
	}
}

// TestHandlerContextWithoutKeys covers the fallback for a grpc whose keys
// cannot be found: the WithValue layers must answer the same lookups.
func TestHandlerContextWithoutKeys(t *testing.T) {
	saved := grpcKeys
	grpcKeys = grpcContextKeys{}
	defer func() { grpcKeys = saved }()

	parent := metadata.AppendToOutgoingContext(context.Background(), "k", "v")
	c := newTestServerContext(parent)
	ctx := c.handler
	if md, _ := metadata.FromIncomingContext(ctx); md["k"][0] != "v" {
		t.Errorf("incoming metadata = %v", md)
	}
	if p, ok := peer.FromContext(ctx); !ok || p != inprocPeer {
		t.Errorf("peer = %v", p)
	}
	if m, _ := grpc.Method(ctx); m != "/s/m" {
		t.Errorf("method = %q", m)
	}
	if err := grpc.SetHeader(ctx, metadata.Pairs("h", "1")); err != nil {
		t.Error(err)
	}
}

// TestDoneAndErrAgree: Err is non-nil exactly when Done is closed, however
// the context ends, and whether or not Done was asked for first.
func TestDoneAndErrAgree(t *testing.T) {
	isClosed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	for _, askDoneFirst := range []bool{false, true} {
		parent, cancel := context.WithCancel(context.Background())
		c := newTestServerContext(parent)
		var done <-chan struct{}
		if askDoneFirst {
			done = c.Done()
		}
		if c.Err() != nil {
			t.Fatal("live context has an error")
		}
		cancel()
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("after the client cancelled, Err = %v", err)
		}
		if done == nil {
			done = c.Done()
		}
		if !isClosed(done) {
			t.Fatal("Err is set but Done is open")
		}
	}

	parent, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	c := newTestServerContext(parent)
	<-c.Done()
	if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after the client's deadline, Err = %v", err)
	}

	c = newTestServerContext(context.Background())
	c.cancel(context.Canceled)
	c.cancel(context.DeadlineExceeded) // only the first end counts
	if !isClosed(c.Done()) || !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("ended context: Err = %v", c.Err())
	}
}

func TestAfterFunc(t *testing.T) {
	c := newTestServerContext(context.Background())
	ran := make(chan string, 3)
	stop1 := c.AfterFunc(func() { ran <- "first" })
	c.AfterFunc(func() { ran <- "second" })
	if !stop1() {
		t.Fatal("stop before the end did not stop")
	}
	if len(c.afterFuncs) != 1 {
		t.Fatalf("%d functions still registered, want 1", len(c.afterFuncs))
	}
	c.cancel(context.Canceled)
	if got := <-ran; got != "second" {
		t.Fatalf("ran %q", got)
	}
	stop3 := c.AfterFunc(func() { ran <- "late" }) // after the end: runs at once
	if got := <-ran; got != "late" {
		t.Fatalf("ran %q", got)
	}
	if stop3() {
		t.Fatal("stop after running reported stopping")
	}
}

func TestMetadataState(t *testing.T) {
	c := newTestServerContext(context.Background())
	if err := c.SetHeader(metadata.MD{"Mixed-Case": {"a"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.SendHeader(nil); err != nil {
		t.Fatal(err)
	}
	if err := c.SendHeader(nil); err == nil {
		t.Error("second SendHeader succeeded")
	}
	c.SetTrailer(metadata.Pairs("t", "1"))
	header, trailer := c.close()
	if header["mixed-case"][0] != "a" || trailer["t"][0] != "1" {
		t.Fatalf("header %v, trailer %v", header, trailer)
	}
	if err := c.SetTrailer(metadata.Pairs("t", "2")); err == nil {
		t.Error("SetTrailer after the end succeeded")
	}
}
