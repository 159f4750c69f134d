package criwire

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Field numbers of cri-api's api.proto (runtime.v1).
const (
	listingContainers = 1 // the listing messages' only field

	containerID           = 1
	containerPodSandboxID = 2
	containerMetadata     = 3
	containerImage        = 4
	containerImageRef     = 5
	containerState        = 6
	containerCreatedAt    = 7
	containerLabels       = 8
	containerAnnotations  = 9
	containerImageID      = 10

	metadataName    = 1
	metadataAttempt = 2

	imageImage              = 1
	imageAnnotations        = 2
	imageUserSpecifiedImage = 18
	imageRuntimeHandler     = 19
	imageImageRef           = 20

	mapKey   = 1
	mapValue = 2
)

// SizeListing is the encoded size of a listing of cs.
func SizeListing(cs []*runtimeapi.Container) int {
	n := 0
	for _, c := range cs {
		n += sizeField(listingContainers, sizeContainer(c))
	}
	return n
}

// AppendListing appends the encoding of a listing of cs to b. A nil
// element encodes as an empty container, as in protobuf-go.
func AppendListing(b []byte, cs []*runtimeapi.Container) []byte {
	return MarshalListing(cs, func(size int) []byte { return slices.Grow(b, size) })
}

// MarshalListing appends the encoding of a listing of cs to the buffer
// that alloc returns for the listing's size, and returns the buffer. Each container's size prefixes it, so sizing the buffer and
// writing the containers would each work out every size; MarshalListing
// works them out once.
func MarshalListing(cs []*runtimeapi.Container, alloc func(size int) []byte) []byte {
	var small [64]int // no allocation for the sizes of a chunk
	sizes := small[:0]
	total := 0
	for _, c := range cs {
		n := sizeContainer(c)
		sizes = append(sizes, n)
		total += sizeField(listingContainers, n)
	}
	b := alloc(total)
	for i, c := range cs {
		b = protowire.AppendTag(b, listingContainers, protowire.BytesType)
		b = appendVarint(b, uint64(sizes[i]))
		b = appendContainer(b, c)
	}
	return b
}

// appendVarint is protowire.AppendVarint, with the one-byte case inlined
// where it is called: most lengths in a listing are under 128.
func appendVarint(b []byte, v uint64) []byte {
	if v < 1<<7 {
		return append(b, byte(v))
	}
	return protowire.AppendVarint(b, v)
}

// sizeVarint is protowire.SizeVarint, with the one-byte case inlined.
func sizeVarint(v uint64) int {
	if v < 1<<7 {
		return 1
	}
	return protowire.SizeVarint(v)
}

// sizeTag is the size of field num's tag; every field here is below 2048.
func sizeTag(num protowire.Number) int {
	if num < 16 {
		return 1
	}
	return 2
}

// sizeField is the size of a length-delimited field of n bytes.
func sizeField(num protowire.Number, n int) int {
	return sizeTag(num) + sizeVarint(uint64(n)) + n
}

// sizeString is the size of a proto3 string field: nothing when empty.
func sizeString(num protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return sizeField(num, len(s))
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = appendVarint(b, uint64(len(s)))
	return append(b, s...)
}

// sizeNumber is the size of a proto3 integer field: nothing when zero.
func sizeNumber(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return sizeTag(num) + sizeVarint(v)
}

func appendNumber(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return appendVarint(b, v)
}

// sizeEntry is the size of one map<string, string> entry's body. Entries
// always carry both key and value, as protobuf-go writes them.
func sizeEntry(k, v string) int {
	return sizeField(mapKey, len(k)) + sizeField(mapValue, len(v))
}

func sizeMap(num protowire.Number, m map[string]string) int {
	n := 0
	for k, v := range m {
		n += sizeField(num, sizeEntry(k, v))
	}
	return n
}

func appendMap(b []byte, num protowire.Number, m map[string]string) []byte {
	for k, v := range m {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = appendVarint(b, uint64(sizeEntry(k, v)))
		b = protowire.AppendTag(b, mapKey, protowire.BytesType)
		b = appendVarint(b, uint64(len(k)))
		b = append(b, k...)
		b = protowire.AppendTag(b, mapValue, protowire.BytesType)
		b = appendVarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

func sizeMetadata(m *runtimeapi.ContainerMetadata) int {
	return sizeString(metadataName, m.GetName()) + sizeNumber(metadataAttempt, uint64(m.GetAttempt()))
}

func appendMetadata(b []byte, m *runtimeapi.ContainerMetadata) []byte {
	b = appendString(b, metadataName, m.GetName())
	return appendNumber(b, metadataAttempt, uint64(m.GetAttempt()))
}

func sizeImage(s *runtimeapi.ImageSpec) int {
	return sizeString(imageImage, s.GetImage()) +
		sizeMap(imageAnnotations, s.GetAnnotations()) +
		sizeString(imageUserSpecifiedImage, s.GetUserSpecifiedImage()) +
		sizeString(imageRuntimeHandler, s.GetRuntimeHandler()) +
		sizeString(imageImageRef, s.GetImageRef())
}

func appendImage(b []byte, s *runtimeapi.ImageSpec) []byte {
	b = appendString(b, imageImage, s.GetImage())
	b = appendMap(b, imageAnnotations, s.GetAnnotations())
	b = appendString(b, imageUserSpecifiedImage, s.GetUserSpecifiedImage())
	b = appendString(b, imageRuntimeHandler, s.GetRuntimeHandler())
	return appendString(b, imageImageRef, s.GetImageRef())
}

// sizeContainer is c's encoded size. A set sub-message is written even when
// empty, as proto3 message fields have presence.
func sizeContainer(c *runtimeapi.Container) int {
	n := sizeString(containerID, c.GetId()) + sizeString(containerPodSandboxID, c.GetPodSandboxId())
	if m := c.GetMetadata(); m != nil {
		n += sizeField(containerMetadata, sizeMetadata(m))
	}
	if s := c.GetImage(); s != nil {
		n += sizeField(containerImage, sizeImage(s))
	}
	return n + sizeString(containerImageRef, c.GetImageRef()) +
		sizeNumber(containerState, uint64(c.GetState())) +
		sizeNumber(containerCreatedAt, uint64(c.GetCreatedAt())) +
		sizeMap(containerLabels, c.GetLabels()) +
		sizeMap(containerAnnotations, c.GetAnnotations()) +
		sizeString(containerImageID, c.GetImageId())
}

func appendContainer(b []byte, c *runtimeapi.Container) []byte {
	b = appendString(b, containerID, c.GetId())
	b = appendString(b, containerPodSandboxID, c.GetPodSandboxId())
	if m := c.GetMetadata(); m != nil {
		b = protowire.AppendTag(b, containerMetadata, protowire.BytesType)
		b = appendVarint(b, uint64(sizeMetadata(m)))
		b = appendMetadata(b, m)
	}
	if s := c.GetImage(); s != nil {
		b = protowire.AppendTag(b, containerImage, protowire.BytesType)
		b = appendVarint(b, uint64(sizeImage(s)))
		b = appendImage(b, s)
	}
	b = appendString(b, containerImageRef, c.GetImageRef())
	// Enums and int64 are varints of their sign-extended 64-bit value.
	b = appendNumber(b, containerState, uint64(c.GetState()))
	b = appendNumber(b, containerCreatedAt, uint64(c.GetCreatedAt()))
	b = appendMap(b, containerLabels, c.GetLabels())
	b = appendMap(b, containerAnnotations, c.GetAnnotations())
	return appendString(b, containerImageID, c.GetImageId())
}
