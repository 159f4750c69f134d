package mockcri

import (
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A floor server sends the listings' real bytes, encoded once: a client
// that decodes (protobuf-go here) sees every container, from the first
// listing and from the cached ones after it, filtered or not.
func TestFloorServerSendsRealListings(t *testing.T) {
	cfg := DefaultConfig(40)
	cfg.Annotations = 32
	inv := MustGenerate(cfg)
	c := servePeers(t, inv, "unix", Transport{Codec: CodecFloor}, Transport{Codec: CodecProto})
	for range 2 {
		list, stream, chunked := listAll(t, testContext(t), c, nil, 16)
		sameContainers(t, "ListContainers", list, inv.Containers)
		sameContainers(t, "StreamContainers", flatten(stream), inv.Containers)
		sameContainers(t, "ListContainersChunked", flatten(chunked), inv.Containers)
	}
	// Two filters whose results start with the same container and have the
	// same length must not share bytes.
	floor := Transport{Codec: CodecFloor}.codec()
	first := inv.Containers[0]
	for _, other := range []*runtimeapi.Container{inv.Containers[1], inv.Containers[2]} {
		want := []*runtimeapi.Container{first, other}
		got := &runtimeapi.ListContainersResponse{}
		data, err := floor.Marshal(&runtimeapi.ListContainersResponse{Containers: want})
		if err != nil {
			t.Fatal(err)
		}
		if err := proto.Unmarshal(data.Materialize(), got); err != nil {
			t.Fatal(err)
		}
		sameContainers(t, "a two-container chunk", got.Containers, want)
	}
}

// A floor client counts the containers of each message without decoding
// them, so a listing has the right length; what it holds is empty.
func TestFloorClientCountsContainers(t *testing.T) {
	cfg := DefaultConfig(40)
	cfg.Annotations = 32
	inv := MustGenerate(cfg)
	c := serveTuned(t, inv, "unix", Transport{Codec: CodecFloor})
	list, stream, chunked := listAll(t, testContext(t), c, nil, 16)
	if len(list) != 40 || len(flatten(stream)) != 40 || len(stream) != 40 {
		t.Errorf("list %d, stream %d in %d messages; want 40, 40 in 40", len(list), len(flatten(stream)), len(stream))
	}
	if got := chunkSizes(chunked); !equalInts(got, []int{16, 16, 8}) {
		t.Errorf("chunks %v, want [16 16 8]", got)
	}
	if list[0].Id != "" {
		t.Errorf("a floor client decoded a container: id %q", list[0].Id)
	}
}

// Counting reads fields across buffer boundaries, skips the fields it does
// not count, and rejects a message that ends inside a field.
func TestCountContainers(t *testing.T) {
	var b []byte
	for i := range 3 {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, make([]byte, 200*i))
	}
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, 300)
	b = protowire.AppendTag(b, 3, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 1)
	b = protowire.AppendTag(b, 4, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 1)
	for cut := range len(b) + 1 {
		data := mem.BufferSlice{mem.SliceBuffer(b[:cut]), mem.SliceBuffer(b[cut:])}
		cs, err := countContainers(data)
		if err != nil || len(cs) != 3 {
			t.Fatalf("cut at %d: %d containers, %v; want 3", cut, len(cs), err)
		}
	}
	for _, bad := range [][]byte{b[:len(b)-1], b[:3], {0x0b}} {
		if _, err := countContainers(mem.BufferSlice{mem.SliceBuffer(bad)}); err == nil {
			t.Errorf("% x: counted without error", bad)
		}
	}
}
