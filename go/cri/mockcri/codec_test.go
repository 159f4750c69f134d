package mockcri

import (
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// The codec round-trips messages of every size through its pool, and
// passes bytes encoded ahead through untouched.
func TestCodec(t *testing.T) {
	for _, codec := range []string{CodecProto, CodecCRIWire} {
		t.Run(codec, func(t *testing.T) { testCodec(t, Transport{Pool: PoolPow2, Codec: codec}.codec()) })
	}
}

func testCodec(t *testing.T, c codec) {
	for _, n := range []int{0, 1, 16, 300} {
		cfg := DefaultConfig(n)
		cfg.Annotations = 32
		want := &runtimeapi.ListContainersResponse{Containers: MustGenerate(cfg).Containers}
		data, err := c.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if data.Len() != proto.Size(want) {
			t.Errorf("%d containers: %d bytes, want %d", n, data.Len(), proto.Size(want))
		}
		ahead, err := c.Marshal(&encoded{data})
		if err != nil {
			t.Fatal(err)
		}
		got := &runtimeapi.ListContainersResponse{}
		if err := c.Unmarshal(ahead, got); err != nil {
			t.Fatal(err)
		}
		ahead.Free()
		if !proto.Equal(got, want) {
			t.Errorf("%d containers: the round trip changed the message", n)
		}
	}
}

// The codecs' bytes are the same protobuf: each decodes the other's
// listings, and the criwire codec leaves what it does not decode exactly,
// such as an unknown field, to protobuf-go.
func TestCodecsInteroperate(t *testing.T) {
	cfg := DefaultConfig(40)
	cfg.Annotations = 32
	cs := MustGenerate(cfg).Containers
	protoCodec := Transport{Codec: CodecProto}.codec()
	wireCodec := Transport{Codec: CodecCRIWire}.codec()
	for _, pair := range [][2]codec{{protoCodec, wireCodec}, {wireCodec, protoCodec}} {
		for _, want := range []proto.Message{
			&runtimeapi.ListContainersResponse{Containers: cs},
			&runtimeapi.StreamContainersResponse{Containers: cs[:1]},
			&cripb.ListContainersChunkedResponse{Containers: cs[:16]},
		} {
			data, err := pair[0].Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			got := want.ProtoReflect().New().Interface()
			if err := pair[1].Unmarshal(data, got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got, want) {
				t.Errorf("%T: encoded with listings=%v, decoded with listings=%v: changed", want, pair[0].listings, pair[1].listings)
			}
		}
	}

	withUnknown := &runtimeapi.ListContainersResponse{Containers: cs[:2]}
	withUnknown.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 7))
	b, err := proto.Marshal(withUnknown)
	if err != nil {
		t.Fatal(err)
	}
	got := &runtimeapi.ListContainersResponse{}
	if err := wireCodec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, withUnknown) {
		t.Error("a listing with an unknown field lost it")
	}
	if err := wireCodec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b[:len(b)-1])}, got); err == nil {
		t.Error("a truncated listing decoded without error")
	}
}

func TestCodecRejectsNonProto(t *testing.T) {
	c := codec{pool: mem.DefaultBufferPool()}
	if _, err := c.Marshal(struct{}{}); err == nil {
		t.Error("Marshal of a struct: no error")
	}
	if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer([]byte{})}, new(int)); err == nil {
		t.Error("Unmarshal into an int: no error")
	}
}

func TestTransportValidate(t *testing.T) {
	for _, tc := range []struct {
		t  Transport
		ok bool
	}{
		{Transport{}, true},
		{Transport{Window: MinWindow, Buffer: 1, Pool: PoolGRPC}, true},
		{Transport{Window: 16 << 20, Pool: PoolPow2}, true},
		{Transport{Window: 1024}, false},
		{Transport{Buffer: -1}, false},
		{Transport{Codec: CodecCRIWire}, true},
		{Transport{Codec: CodecFloor}, true},
		{Transport{Codec: "gogo"}, false},
		{Transport{Pool: "jumbo"}, false},
	} {
		if err := tc.t.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.t, err)
		}
	}
}
