package criwire

import (
	"errors"
	"hash/crc32"
	"runtime"
	"testing"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// allocBytesPerInputByte bounds what decoding may allocate for each byte
// of its input. The densest listing is of empty containers, two bytes
// each, and costs about 170 bytes a byte: each container's share of the
// array of containers with their metadata and image specs, and a pointer.
// Whatever lengths and counts an input declares, decoding must stay within
// a small multiple of that.
const allocBytesPerInputByte = 512

// allocSlack is what decoding may allocate beyond that bound: a map's
// smallest table, the message's copy as a string.
const allocSlack = 16 << 10

// FuzzUnmarshalListing decodes arbitrary bytes with both decoders and
// holds them to protobuf-go: whatever they accept, protobuf-go accepts and
// decodes to the same containers; whatever they refuse, they refuse with
// ErrDeclined. Whatever protobuf-go accepts, AppendListing writes as a
// listing that both decode back to the same containers, less the unknown
// fields protobuf-go keeps. Decoding allocates within a bound proportional
// to the input. The seeds are testdata/fuzz/FuzzUnmarshalListing
// (TestFuzzSeeds).
func FuzzUnmarshalListing(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := checkDecoders(t, b)
		var ref runtimeapi.ListContainersResponse
		refErr := proto.Unmarshal(b, &ref)
		if err == nil {
			if refErr != nil {
				t.Fatalf("criwire decoded %d containers where protobuf-go fails: %v", len(cs), refErr)
			}
			checkEqual(t, "criwire", cs, ref.Containers)
			checkRoundTrip(t, cs)
		}
		if refErr == nil {
			checkRoundTrip(t, withoutUnknown(ref.Containers))
		}
		checkAllocations(t, b)
	})
}

// checkDecoders decodes b with UnmarshalListing and UnmarshalListingString
// and checks that they agree and fail only with ErrDeclined.
func checkDecoders(t *testing.T, b []byte) ([]*runtimeapi.Container, error) {
	t.Helper()
	cs, err := UnmarshalListing(b)
	cs2, err2 := UnmarshalListingString(string(b))
	if err != nil && !errors.Is(err, ErrDeclined) {
		t.Fatalf("UnmarshalListing failed with %v, not ErrDeclined", err)
	}
	if (err == nil) != (err2 == nil) {
		t.Fatalf("UnmarshalListing: %v; UnmarshalListingString: %v", err, err2)
	}
	if err == nil {
		checkEqual(t, "UnmarshalListingString", cs2, cs)
	}
	return cs, err
}

// checkRoundTrip encodes cs with AppendListing and requires criwire and
// protobuf-go to decode it back to cs.
func checkRoundTrip(t *testing.T, cs []*runtimeapi.Container) {
	t.Helper()
	b := AppendListing(nil, cs)
	if len(b) != SizeListing(cs) {
		t.Fatalf("AppendListing wrote %d bytes, SizeListing says %d", len(b), SizeListing(cs))
	}
	got, err := checkDecoders(t, b)
	if err != nil {
		t.Fatalf("criwire declines AppendListing's encoding of %d containers: %v", len(cs), err)
	}
	checkEqual(t, "criwire after AppendListing", got, cs)
	var ref runtimeapi.ListContainersResponse
	if err := proto.Unmarshal(b, &ref); err != nil {
		t.Fatalf("protobuf-go fails on AppendListing's encoding: %v", err)
	}
	checkEqual(t, "protobuf-go after AppendListing", ref.Containers, cs)
}

// withoutUnknown drops the unknown fields that protobuf-go kept in cs,
// which listings do not carry.
func withoutUnknown(cs []*runtimeapi.Container) []*runtimeapi.Container {
	for _, c := range cs {
		c.ProtoReflect().SetUnknown(nil)
		if c.Metadata != nil {
			c.Metadata.ProtoReflect().SetUnknown(nil)
		}
		if c.Image != nil {
			c.Image.ProtoReflect().SetUnknown(nil)
		}
	}
	return cs
}

func checkEqual(t *testing.T, what string, got, want []*runtimeapi.Container) {
	t.Helper()
	g := &runtimeapi.ListContainersResponse{Containers: got}
	w := &runtimeapi.ListContainersResponse{Containers: want}
	if !proto.Equal(g, w) {
		t.Fatalf("%s decoded\n%v\nwant\n%v", what, g, w)
	}
}

// checkAllocations decodes b again and fails if that allocated more than
// the input's size allows. Counting allocations stops the world, which
// costs ten times the rest of the target, so it checks one input in
// eight, chosen by their checksum: an input that fails fails again.
func checkAllocations(t *testing.T, b []byte) {
	t.Helper()
	if crc32.ChecksumIEEE(b)%8 != 0 {
		return
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cs, _ := UnmarshalListing(b)
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(cs)
	allocated := after.TotalAlloc - before.TotalAlloc
	if limit := uint64(allocBytesPerInputByte*len(b) + allocSlack); allocated > limit {
		t.Fatalf("decoding %d bytes allocated %d bytes, more than %d", len(b), allocated, limit)
	}
}
