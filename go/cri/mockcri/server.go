package mockcri

import (
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// Register adds the mock runtime's services over inv to s: the CRI
// RuntimeService and ImageService, ChunkedRuntimeService and
// MockRuntimeDebug.
func Register(s grpc.ServiceRegistrar, inv *Inventory) {
	runtimeapi.RegisterRuntimeServiceServer(s, &runtimeService{inv: inv})
	runtimeapi.RegisterImageServiceServer(s, &imageService{inv: inv})
	cripb.RegisterChunkedRuntimeServiceServer(s, &chunkedService{inv: inv})
	cripb.RegisterMockRuntimeDebugServer(s, debugService{})
}

// NewServer returns a gRPC server with the mock runtime's services over
// inv, ready to Serve.
func NewServer(inv *Inventory, opts ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(opts...)
	Register(s, inv)
	return s
}
