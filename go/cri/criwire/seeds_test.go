package criwire

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/grpcbench/grpcbench/internal/fuzzseed"
)

// TestFuzzSeeds keeps FuzzUnmarshalListing's checked-in corpus: realistic
// listings, and the edges of the wire format that criwire declines or
// that protobuf-go rejects.
func TestFuzzSeeds(t *testing.T) {
	var seeds [][]any
	add := func(b []byte) { seeds = append(seeds, []any{b}) }
	// Map entries in a fixed order, so that the seeds stay the same.
	for seed := range uint64(5) {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&runtimeapi.ListContainersResponse{Containers: randomContainers(seed, 2, 1+int(seed))})
		if err != nil {
			t.Fatal(err)
		}
		add(b)
	}
	add(nil)
	add([]byte{0x0a, 0x00})
	entry := field(nil, mapKey, []byte("k"))
	metadata := field(nil, containerMetadata, field(nil, metadataName, []byte("a")))
	image := field(nil, imageAnnotations, field(entry, mapValue, []byte("v")))
	image = field(image, imageRuntimeHandler, []byte("runc"))
	for _, c := range [][]byte{
		field(nil, containerLabels, entry),                                                              // a key without a value
		field(nil, containerLabels, field(nil, mapValue, []byte("v"))),                                  // a value without a key
		field(field(nil, containerLabels, entry), containerLabels, field(entry, mapValue, []byte("v"))), // a key twice
		field(nil, containerImage, image),
		field(nil, containerImage, field(nil, 3, nil)),
		append(metadata, metadata...),
		protowire.AppendVarint(protowire.AppendTag(nil, containerCreatedAt, protowire.VarintType), 1<<64-1), // -1
		protowire.AppendVarint(protowire.AppendTag(nil, containerID, protowire.VarintType), 1),
		field(nil, containerID, []byte{0xff}),
		field(nil, containerAnnotations, field(nil, mapKey, []byte{0xc0})),
		{0x0a, 0x80, 0x00},       // a length of two bytes where one does
		{0x0a, 0x05, 'a'},        // a length beyond the message
		{0x52, 0xff, 0xff, 0xff}, // a truncated length
	} {
		add(field(nil, listingContainers, c))
	}
	add([]byte{0x02, 0x00})                                                       // field number 0
	add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}) // the largest length
	fuzzseed.Check(t, "FuzzUnmarshalListing", seeds...)
}
