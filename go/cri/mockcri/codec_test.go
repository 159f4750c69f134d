package mockcri

import (
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The codec round-trips messages of every size through its pool, and
// passes bytes encoded ahead through untouched.
func TestCodec(t *testing.T) {
	c := Transport{Pool: PoolPow2}.codec()
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

func TestCodecRejectsNonProto(t *testing.T) {
	c := codec{mem.DefaultBufferPool()}
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
		{Transport{Pool: "jumbo"}, false},
	} {
		if err := tc.t.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.t, err)
		}
	}
}
