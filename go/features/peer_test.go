package features_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/grpcbench/grpcbench/go/handlercost/wire"
)

// The peer's methods, on raw octets (wire.Codec). Their behaviour comes
// from the request metadata:
//   - call-id: the attempts of one call are counted together under it;
//   - fail-first: N, the first N attempts fail;
//   - fail-code: the status they fail with (a number; UNAVAILABLE if absent);
//   - pushback-ms: the grpc-retry-pushback-ms trailer of a failure;
//   - sleep-ms: how long an attempt waits before answering;
//   - sleep-first-ms: how long the call's first attempt waits (a slow
//     server, for hedging).
const (
	flakyPath = "/features.Peer/Flaky"
	sumPath   = "/features.Peer/Sum"
)

// attempt is what the peer saw of one attempt.
type attempt struct {
	previous string        // its grpc-previous-rpc-attempts ("" if absent)
	at       time.Time     // when it arrived
	timeout  time.Duration // its deadline, from then (0 if none)
	messages int           // request messages (Sum)
	trace    string        // its traceparent ("" if absent)
}

// peer is a grpc-go server at its defaults that records every attempt.
type peer struct {
	mu        sync.Mutex
	attempts  map[string][]attempt
	cancelled map[string]int // attempts whose client cancelled them while they waited
}

// record notes an attempt of the call in ctx and returns how many of its
// attempts came before it, and the call's metadata.
func (p *peer) record(ctx context.Context, messages int) (int, metadata.MD) {
	md, _ := metadata.FromIncomingContext(ctx)
	a := attempt{at: time.Now(), messages: messages}
	if v := md.Get("grpc-previous-rpc-attempts"); len(v) > 0 {
		a.previous = v[0]
	}
	a.trace = first(md, "traceparent")
	if d, ok := ctx.Deadline(); ok {
		a.timeout = time.Until(d)
	}
	id := first(md, "call-id")
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attempts[id] = append(p.attempts[id], a)
	return len(p.attempts[id]) - 1, md
}

func newPeer() *peer {
	return &peer{attempts: map[string][]attempt{}, cancelled: map[string]int{}}
}

// seen is a copy of the attempts recorded under call id.
func (p *peer) seen(id string) []attempt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]attempt(nil), p.attempts[id]...)
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func number(md metadata.MD, key string, def int) int {
	if n, err := strconv.Atoi(first(md, key)); err == nil {
		return n
	}
	return def
}

// answer waits as the metadata says, then fails the attempt that came after `before` others if the metadata
// says so, and otherwise returns response.
func (p *peer) answer(ctx context.Context, before int, md metadata.MD, response []byte) ([]byte, error) {
	ms := number(md, "sleep-ms", 0)
	if before == 0 {
		ms += number(md, "sleep-first-ms", 0)
	}
	if ms > 0 {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			p.mu.Lock()
			p.cancelled[first(md, "call-id")]++
			p.mu.Unlock()
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	if before < number(md, "fail-first", 0) {
		if pushback := first(md, "pushback-ms"); pushback != "" {
			grpc.SetTrailer(ctx, metadata.Pairs("grpc-retry-pushback-ms", pushback))
		}
		return nil, status.Errorf(codes.Code(number(md, "fail-code", int(codes.Unavailable))), "attempt %d fails", before)
	}
	return response, nil
}

func (p *peer) flaky(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var request []byte
	if err := dec(&request); err != nil {
		return nil, err
	}
	before, md := p.record(ctx, 1)
	return p.answer(ctx, before, md, request)
}

func (p *peer) sum(_ any, stream grpc.ServerStream) error {
	messages := 0
	for {
		var m []byte
		err := stream.RecvMsg(&m)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		messages++
	}
	before, md := p.record(stream.Context(), messages)
	response, err := p.answer(stream.Context(), before, md, binary.BigEndian.AppendUint32(nil, uint32(messages)))
	if err != nil {
		return err
	}
	return stream.SendMsg(response)
}

func (p *peer) desc() *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "features.Peer",
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Flaky", Handler: p.flaky}},
		Streams:     []grpc.StreamDesc{{StreamName: "Sum", Handler: p.sum, ClientStreams: true}},
	}
}

// startPeer serves a new peer on lis until the test ends.
func startPeer(t *testing.T, lis net.Listener, opts ...grpc.ServerOption) *peer {
	t.Helper()
	p, _ := startStoppablePeer(t, lis, opts...)
	return p
}

// startStoppablePeer is startPeer, and a function that stops the server
// gracefully (the test's end stops it too).
func startStoppablePeer(t *testing.T, lis net.Listener, opts ...grpc.ServerOption) (*peer, func()) {
	t.Helper()
	p := newPeer()
	srv := grpc.NewServer(append(opts, grpc.ForceServerCodec(wire.Codec{}))...)
	srv.RegisterService(p.desc(), nil)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return p, srv.GracefulStop
}

// listen is a loopback listener on a free port.
func listen(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}
