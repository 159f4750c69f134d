package inprocgrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// inprocAddr is the address of both ends of every in-process RPC.
type inprocAddr struct{}

func (inprocAddr) Network() string { return "inproc" }
func (inprocAddr) String() string  { return "inproc" }

// inprocPeer is what grpc.Peer and peer.FromContext report. It is shared by
// all calls; treat it as read-only.
var inprocPeer = &peer.Peer{Addr: inprocAddr{}, LocalAddr: inprocAddr{}}

// setCallResults fills the call options that receive results: response
// header and trailer, and the peer. It walks the options instead of
// collecting them first, which would allocate on every call.
func setCallResults(opts []grpc.CallOption, header, trailer metadata.MD) {
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = header
		case grpc.TrailerCallOption:
			*o.TrailerAddr = trailer
		case grpc.PeerCallOption:
			*o.PeerAddr = *inprocPeer
		}
	}
}

// withCallCredentials adds the metadata of per-RPC credentials
// (grpc.PerRPCCredentials) to the outgoing metadata, as a transport would.
// An in-process channel counts as secure: nothing leaves the process.
func withCallCredentials(ctx context.Context, method string, opts []grpc.CallOption) (context.Context, error) {
	for _, o := range opts {
		creds, ok := o.(grpc.PerRPCCredsCallOption)
		if !ok || creds.Creds == nil {
			continue
		}
		md, err := creds.Creds.GetRequestMetadata(ctx, "inproc:"+method)
		if err != nil {
			// As grpc-go: a status from the credentials is kept, any
			// other failure is Unauthenticated.
			if _, ok := status.FromError(err); ok {
				return ctx, err
			}
			return ctx, status.Errorf(codes.Unauthenticated, "per-RPC credentials failed: %v", err)
		}
		for k, v := range md {
			ctx = metadata.AppendToOutgoingContext(ctx, k, v)
		}
	}
	return ctx, nil
}
