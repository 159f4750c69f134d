package mockcri

import (
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// Register adds the mock runtime's services over inv to s: the CRI
// RuntimeService and ImageService, ChunkedRuntimeService and
// MockRuntimeDebug. The streaming list handlers encode their messages
// ahead with t's codec, so s must have been created with
// t.ServerOptions(), as NewServer does.
func Register(s grpc.ServiceRegistrar, inv *Inventory, t Transport) {
	c := t.codec()
	runtimeapi.RegisterRuntimeServiceServer(s, &runtimeService{inv: inv, codec: c})
	runtimeapi.RegisterImageServiceServer(s, &imageService{inv: inv})
	cripb.RegisterChunkedRuntimeServiceServer(s, &chunkedService{inv: inv, codec: c})
	cripb.RegisterMockRuntimeDebugServer(s, debugService{})
}

// NewServer returns a gRPC server with the mock runtime's services over
// inv and transport tuning t, ready to Serve. opts come after t's and may
// add to them.
func NewServer(inv *Inventory, t Transport, opts ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(append(t.ServerOptions(), opts...)...)
	Register(s, inv, t)
	return s
}
