package mockcri

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// MaxMessageSize is the largest message kubelet's CRI client sends or
// receives (16 MiB, pkg/kubelet/cri/remote). Benchmark clients use the same
// bound, so a ListContainers that would fail on a real node fails here too.
const MaxMessageSize = 16 << 20

// Dial connects to e as kubelet does: plaintext over a local socket, with
// kubelet's message size limits. opts come after those and may override
// them.
func Dial(e Endpoint, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	base := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(MaxMessageSize),
			grpc.MaxCallSendMsgSize(MaxMessageSize),
		),
	}
	return grpc.NewClient(e.Target(), append(base, opts...)...)
}
