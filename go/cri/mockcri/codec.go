package mockcri

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/grpcbench/grpcbench/go/cri/criwire"
	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// codec is grpc-go's proto codec (encoding/proto, v1.85) with its buffers
// from pool instead of mem.DefaultBufferPool(), which that codec hard-codes:
// a connection's buffer pool option reaches only the transport's frame
// buffers, not the encoded message nor the one gathered for decoding, which
// are where a message's size meets the pool's tiers. With listings set it
// encodes and decodes container listings with criwire (CodecCRIWire); with
// floor set it neither encodes nor decodes them (CodecFloor, floor.go).
type codec struct {
	pool     mem.BufferPool
	listings bool
	floor    *floorCache
}

// Name is the codec it stands in for, so peers see the usual
// application/grpc content type.
func (codec) Name() string { return "proto" }

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	if e, ok := v.(*encoded); ok {
		return e.data, nil
	}
	if f, kind := listingField(v); f != nil && c.floor != nil {
		return c.floor.encoded(kind, *f, func() mem.BufferSlice { return c.marshalListing(*f) }), nil
	} else if f != nil && c.listings {
		return c.marshalListing(*f), nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("proto: cannot marshal %T, not a proto.Message", v)
	}
	// Size fills the size caches MarshalAppend then reuses, as in grpc-go.
	size := proto.Size(m)
	opts := proto.MarshalOptions{UseCachedSize: true}
	if mem.IsBelowBufferPoolingThreshold(size) {
		b, err := opts.Marshal(m)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	buf := c.pool.Get(size)
	if _, err := opts.MarshalAppend((*buf)[:0], m); err != nil {
		c.pool.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, c.pool)}, nil
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("proto: cannot unmarshal into %T, not a proto.Message", v)
	}
	f, _ := listingField(v)
	if f != nil && c.floor != nil {
		cs, err := countContainers(data)
		if err != nil {
			return err
		}
		proto.Reset(m)
		*f = cs
		return nil
	}
	if f != nil && c.listings {
		// The containers' strings will be substrings of one copy of the
		// frames, which a strings.Builder makes without clearing it first.
		var sb strings.Builder
		sb.Grow(data.Len())
		for _, buf := range data {
			sb.Write(buf.ReadOnlyData())
		}
		s := sb.String()
		if cs, err := criwire.UnmarshalListingString(s); err == nil {
			proto.Reset(m)
			*f = cs
			return nil
		}
		// Unknown fields, or a malformed message: protobuf-go keeps the
		// former and words the error for the latter.
		return proto.Unmarshal([]byte(s), m)
	}
	buf := data.MaterializeToBuffer(c.pool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

func (c codec) marshalListing(cs []*runtimeapi.Container) mem.BufferSlice {
	var pooled *[]byte
	b := criwire.MarshalListing(cs, func(size int) []byte {
		if mem.IsBelowBufferPoolingThreshold(size) {
			return make([]byte, 0, size)
		}
		pooled = c.pool.Get(size)
		return (*pooled)[:0]
	})
	if pooled == nil {
		return mem.BufferSlice{mem.SliceBuffer(b)}
	}
	*pooled = b
	return mem.BufferSlice{mem.NewBuffer(pooled, c.pool)}
}

// listingField is the containers field of v, and the name of v's type, if
// v is a container listing, the messages criwire encodes and decodes.
func listingField(v any) (*[]*runtimeapi.Container, string) {
	switch m := v.(type) {
	case *runtimeapi.ListContainersResponse:
		return &m.Containers, "list"
	case *runtimeapi.StreamContainersResponse:
		return &m.Containers, "stream"
	case *cripb.ListContainersChunkedResponse:
		return &m.Containers, "chunked"
	}
	return nil, ""
}
