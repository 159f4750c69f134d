package mockcri

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/grpcbench/grpcbench/internal/fuzzseed"
)

// TestFuzzSeeds keeps FuzzCodecUnmarshal's checked-in corpus: the mock's
// own listings (the benchmark's inventory with fewer annotations), a
// listing request, and what criwire leaves to protobuf-go.
func TestFuzzSeeds(t *testing.T) {
	marshal := func(m proto.Message) []byte {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cfg := DefaultConfig(2)
	cfg.Annotations = 4
	listing := marshal(&runtimeapi.ListContainersResponse{Containers: MustGenerate(cfg).Containers})
	request := marshal(&runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{"app": "web"},
	}})
	unknown := protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), listing...), 99, protowire.VarintType), 7)
	fuzzseed.Check(t, "FuzzCodecUnmarshal",
		[]any{listing, uint16(0), uint16(0)},
		[]any{listing, uint16(3), uint16(200)},
		[]any{request, uint16(5), uint16(9)},
		[]any{unknown, uint16(10), uint16(0)},
		[]any{listing[:len(listing)-1], uint16(7), uint16(70)},
		[]any{[]byte{}, uint16(0), uint16(0)},
	)
}
