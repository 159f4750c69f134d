package mockcri

import (
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// FuzzCodecUnmarshal decodes arbitrary bytes, arriving in up to three
// buffers, with both codecs into every listing message, fresh and already
// holding a listing, as a server or client does. Each must do what
// protobuf-go does with the same bytes: fail where it fails, and decode
// the same message where it succeeds. The seeds are
// testdata/fuzz/FuzzCodecUnmarshal (TestFuzzSeeds).
func FuzzCodecUnmarshal(f *testing.F) {
	codecs := []codec{
		Transport{Codec: CodecProto}.codec(),
		Transport{Pool: PoolPow2, Codec: CodecCRIWire}.codec(),
	}
	f.Fuzz(func(t *testing.T, data []byte, cut1, cut2 uint16) {
		for _, c := range codecs {
			for _, newMessage := range []func() proto.Message{
				func() proto.Message { return &runtimeapi.ListContainersResponse{} },
				func() proto.Message { return &runtimeapi.StreamContainersResponse{} },
				func() proto.Message { return &cripb.ListContainersChunkedResponse{} },
				func() proto.Message { return &runtimeapi.ListContainersRequest{} },
			} {
				for _, used := range []bool{false, true} {
					want, got := newMessage(), newMessage()
					if used {
						stale(want)
						stale(got)
					}
					wantErr := proto.Unmarshal(data, want)
					err := c.Unmarshal(split(data, int(cut1), int(cut2)), got)
					if (err == nil) != (wantErr == nil) {
						t.Fatalf("listings=%v %T (used %v): %v; protobuf-go: %v", c.listings, got, used, err, wantErr)
					}
					if err == nil && !proto.Equal(got, want) {
						t.Fatalf("listings=%v %T (used %v): decoded\n%v\nprotobuf-go\n%v", c.listings, got, used, got, want)
					}
				}
			}
		}
	})
}

// split cuts data into up to three buffers, at cut1 and cut2 (mod its
// length), as frames deliver a message.
func split(data []byte, cut1, cut2 int) mem.BufferSlice {
	if len(data) == 0 {
		return mem.BufferSlice{mem.SliceBuffer(data)}
	}
	i, j := min(cut1, cut2)%(len(data)+1), max(cut1, cut2)%(len(data)+1)
	i, j = min(i, j), max(i, j)
	return mem.BufferSlice{mem.SliceBuffer(data[:i]), mem.SliceBuffer(data[i:j]), mem.SliceBuffer(data[j:])}
}

// stale sets a listing's containers, or any message's unknown fields, so
// that decoding into it must replace what it held.
func stale(m proto.Message) {
	if f, _ := listingField(m); f != nil {
		*f = []*runtimeapi.Container{{Id: "stale", Labels: map[string]string{"stale": "x"}}}
		return
	}
	m.ProtoReflect().SetUnknown([]byte{0x98, 0x06, 0x01}) // field 99, varint 1
}
