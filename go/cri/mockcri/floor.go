package mockcri

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The floor codec (CodecFloor) measures what grpc-go itself costs to carry
// a listing: the same bytes cross the same transport in the same messages,
// but neither peer encodes nor decodes a container. The server sends bytes
// it encoded once per chunk of the inventory, and the client only counts
// the containers of each message. What a listing costs with it is the
// least any codec can reach within grpc-go's API, so the gap between two
// methods there is grpc-go's own.

// floorCacheLimit bounds the octets the floor codec keeps encoded:
// filtered listings make new chunks on every call.
const floorCacheLimit = 256 << 20

// floorChunks is the process's encoded chunks, shared by every floor codec
// in it (a server's, and its handlers' that encode ahead) as pow2Pool is;
// chunks are keyed by their containers, so inventories never mix.
var floorChunks = newFloorCache()

// floorKey names a chunk: the message type it travels in, its first
// container and its length. Chunks of the same key are compared container
// by container before their bytes are reused.
type floorKey struct {
	kind  string
	first *runtimeapi.Container
	n     int
}

type floorEntry struct {
	containers []*runtimeapi.Container
	data       []byte
}

// floorCache is encoded chunks, each made the first time it is sent.
type floorCache struct {
	mu     sync.RWMutex
	chunks map[floorKey]floorEntry
	octets int
}

func newFloorCache() *floorCache {
	return &floorCache{chunks: make(map[floorKey]floorEntry)}
}

// encoded returns the encoding of the listing message v (of kind, holding
// cs), made by encode the first time this chunk is sent. The bytes are
// never changed once cached, so the transport may read them as long as it
// likes and nothing frees them.
func (c *floorCache) encoded(kind string, cs []*runtimeapi.Container, encode func() mem.BufferSlice) mem.BufferSlice {
	if len(cs) == 0 {
		return encode()
	}
	key := floorKey{kind: kind, first: cs[0], n: len(cs)}
	c.mu.RLock()
	e, ok := c.chunks[key]
	c.mu.RUnlock()
	if ok && slices.Equal(e.containers, cs) {
		return mem.BufferSlice{mem.SliceBuffer(e.data)}
	}
	data := encode()
	defer data.Free()
	b := data.Materialize()
	c.mu.Lock()
	defer c.mu.Unlock()
	old, had := c.chunks[key]
	switch {
	case had && slices.Equal(old.containers, cs):
		// Another handler encoded it meanwhile.
	case c.octets-len(old.data)+len(b) <= floorCacheLimit:
		c.chunks[key] = floorEntry{containers: append([]*runtimeapi.Container(nil), cs...), data: b}
		c.octets += len(b) - len(old.data)
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}
}

// floorContainer stands for every container a floor client receives: it
// learns how many there were, not what they hold.
var floorContainer = &runtimeapi.Container{}

// countContainers reads a listing message (any of the three: the
// containers are field 1 of each) without decoding a container, and
// returns as many floorContainers as it carries.
func countContainers(data mem.BufferSlice) ([]*runtimeapi.Container, error) {
	r := data.Reader()
	defer r.Close()
	n := 0
	for r.Remaining() > 0 {
		tag, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("floor codec: reading a tag: %v", err)
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		skip := 0
		switch typ {
		case protowire.VarintType:
			_, err = binary.ReadUvarint(r)
		case protowire.Fixed64Type:
			skip = 8
		case protowire.Fixed32Type:
			skip = 4
		case protowire.BytesType:
			var l uint64
			l, err = binary.ReadUvarint(r)
			if l > uint64(r.Remaining()) {
				err = fmt.Errorf("length %d past the message's end", l)
			}
			skip = int(l)
			if num == 1 {
				n++
			}
		default:
			err = fmt.Errorf("wire type %d", typ)
		}
		if err == nil && skip > 0 {
			if _, err = r.Discard(skip); err != nil {
				err = fmt.Errorf("%d octets past the message's end", skip)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("floor codec: field %d: %v", num, err)
		}
	}
	cs := make([]*runtimeapi.Container, n)
	for i := range cs {
		cs[i] = floorContainer
	}
	return cs, nil
}
