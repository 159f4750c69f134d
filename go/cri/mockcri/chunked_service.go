package mockcri

import (
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// chunkedService is grpcbench's ChunkedRuntimeService: ListContainers'
// result in messages of at most per_chunk containers.
type chunkedService struct {
	cripb.UnimplementedChunkedRuntimeServiceServer
	inv   *Inventory
	codec codec // the server's, for handlers that encode ahead
}

func (s *chunkedService) ListContainersChunked(req *cripb.ListContainersChunkedRequest, stream grpc.ServerStreamingServer[cripb.ListContainersChunkedResponse]) error {
	per := int(req.GetPerChunk())
	if per == 0 {
		per = DefaultPerChunk
	}
	return sendBursts(stream, s.codec, s.inv.ListContainers(req.GetFilter()), per, func(chunk []*runtimeapi.Container) any {
		return &cripb.ListContainersChunkedResponse{Containers: chunk}
	})
}
