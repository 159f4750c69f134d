package inprocgrpc

import (
	"context"
	"reflect"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// grpcKeys are the context keys under which grpc-go looks up a server's
// incoming metadata, its transport stream (behind grpc.SetHeader,
// grpc.SetTrailer, grpc.Method) and the peer. Knowing them lets one
// serverContext answer all three itself, instead of stacking three
// context.WithValue layers (three allocations) on every call.
//
// The keys are unexported, so they are found once: grpc's own accessors are
// asked to look in a context that records what they ask for, and each key
// found is then checked against a context built by grpc's own constructor.
// Should a future grpc look these up differently, the check fails and
// serverContext falls back to the WithValue layers (see handlerContext).
var grpcKeys = findGRPCKeys()

type grpcContextKeys struct {
	incoming, stream, peer any
	ok                     bool
}

// keyRecorder is a context that remembers the last key it was asked for.
type keyRecorder struct {
	context.Context
	key any
}

func (r *keyRecorder) Value(key any) any {
	r.key = key
	return nil
}

func findGRPCKeys() grpcContextKeys {
	record := func(lookup func(context.Context)) any {
		r := &keyRecorder{Context: context.Background()}
		lookup(r)
		if r.key == nil || !reflect.TypeOf(r.key).Comparable() {
			return nil
		}
		return r.key
	}
	k := grpcContextKeys{
		incoming: record(func(ctx context.Context) { metadata.FromIncomingContext(ctx) }),
		stream:   record(func(ctx context.Context) { grpc.ServerTransportStreamFromContext(ctx) }),
		peer:     record(func(ctx context.Context) { peer.FromContext(ctx) }),
	}
	if k.incoming == nil || k.stream == nil || k.peer == nil {
		return grpcContextKeys{}
	}
	bg := context.Background()
	md := metadata.Pairs("probe", "1")
	gotMD, _ := metadata.NewIncomingContext(bg, md).Value(k.incoming).(metadata.MD)
	sts := &serverContext{}
	gotStream, _ := grpc.NewContextWithServerTransportStream(bg, sts).Value(k.stream).(*serverContext)
	p := &peer.Peer{}
	gotPeer, _ := peer.NewContext(bg, p).Value(k.peer).(*peer.Peer)
	k.ok = len(gotMD["probe"]) == 1 && gotStream == sts && gotPeer == p
	return k
}
