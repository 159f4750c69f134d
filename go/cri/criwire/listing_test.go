package criwire

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// listings are the messages of this package's wire shape, each holding cs.
func listings(cs []*runtimeapi.Container) []proto.Message {
	return []proto.Message{
		&runtimeapi.ListContainersResponse{Containers: cs},
		&runtimeapi.StreamContainersResponse{Containers: cs},
		&cripb.ListContainersChunkedResponse{Containers: cs},
	}
}

// randomString is n runes, some of them beyond ASCII.
func randomString(r *rand.Rand, n int) string {
	return randomRunes(r, n, []rune("abcdefghijklmnopqrstuvwxyz0123456789-./:éß日本"))
}

// asciiString is n characters of what Kubernetes names and values are
// mostly made of.
func asciiString(r *rand.Rand, n int) string {
	return randomRunes(r, n, []rune("abcdefghijklmnopqrstuvwxyz0123456789-./:"))
}

func randomRunes(r *rand.Rand, n int, runes []rune) string {
	var b []rune
	for range n {
		b = append(b, runes[r.IntN(len(runes))])
	}
	return string(b)
}

func randomMap(r *rand.Rand, n int) map[string]string {
	if n == 0 && r.IntN(2) == 0 {
		return nil
	}
	m := map[string]string{}
	for range n {
		m[randomString(r, 1+r.IntN(30))] = randomString(r, r.IntN(60)) // values may be empty
	}
	return m
}

// randomContainer varies every field, with zero values, absent
// sub-messages, negative numbers and empty map keys or values among them.
func randomContainer(r *rand.Rand, entries int) *runtimeapi.Container {
	c := &runtimeapi.Container{
		Id:           randomString(r, r.IntN(65)),
		PodSandboxId: randomString(r, r.IntN(65)),
		ImageRef:     randomString(r, r.IntN(80)),
		State:        runtimeapi.ContainerState(r.IntN(6) - 1),
		CreatedAt:    r.Int64() - r.Int64(),
		Labels:       randomMap(r, r.IntN(entries+1)),
		Annotations:  randomMap(r, r.IntN(entries+1)),
		ImageId:      randomString(r, r.IntN(80)),
	}
	if r.IntN(4) > 0 {
		c.Metadata = &runtimeapi.ContainerMetadata{Name: randomString(r, r.IntN(20)), Attempt: r.Uint32() >> r.IntN(32)}
	}
	if r.IntN(4) > 0 {
		c.Image = &runtimeapi.ImageSpec{
			Image:              randomString(r, r.IntN(80)),
			Annotations:        randomMap(r, r.IntN(min(entries, 2)+1)),
			UserSpecifiedImage: randomString(r, r.IntN(40)),
			RuntimeHandler:     randomString(r, r.IntN(10)),
			ImageRef:           randomString(r, r.IntN(40)),
		}
	}
	return c
}

func randomContainers(seed uint64, n, entries int) []*runtimeapi.Container {
	r := rand.New(rand.NewPCG(seed, 7))
	cs := make([]*runtimeapi.Container, n)
	for i := range cs {
		cs[i] = randomContainer(r, entries)
	}
	return cs
}

// decoders are UnmarshalListing and UnmarshalListingString, which must
// agree on everything.
var decoders = map[string]func([]byte) ([]*runtimeapi.Container, error){
	"UnmarshalListing":       UnmarshalListing,
	"UnmarshalListingString": func(b []byte) ([]*runtimeapi.Container, error) { return UnmarshalListingString(string(b)) },
}

func TestUnmarshalListingDecodesProtobufGo(t *testing.T) {
	for name, decode := range decoders {
		t.Run(name, func(t *testing.T) { testDecodesProtobufGo(t, decode) })
	}
}

func testDecodesProtobufGo(t *testing.T, decode func([]byte) ([]*runtimeapi.Container, error)) {
	for seed := range uint64(20) {
		for _, want := range listings(randomContainers(seed, int(seed), 40)) {
			b, err := proto.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := decode(b)
			if err != nil {
				t.Fatalf("seed %d %T: %v", seed, want, err)
			}
			got := &runtimeapi.ListContainersResponse{Containers: cs}
			if !proto.Equal(got, &runtimeapi.ListContainersResponse{Containers: want.(interface {
				GetContainers() []*runtimeapi.Container
			}).GetContainers()}) {
				t.Fatalf("seed %d %T: decoded\n%v\nwant\n%v", seed, want, got, want)
			}
		}
	}
}

func TestAppendListingIsDecodedByProtobufGo(t *testing.T) {
	for seed := range uint64(20) {
		cs := randomContainers(seed, int(seed), 40)
		for _, want := range listings(cs) {
			b := AppendListing(nil, cs)
			if len(b) != SizeListing(cs) || len(b) != proto.Size(want) {
				t.Fatalf("seed %d: encoded %d bytes, SizeListing %d, proto.Size %d", seed, len(b), SizeListing(cs), proto.Size(want))
			}
			got := want.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(b, got); err != nil {
				t.Fatalf("seed %d %T: %v", seed, want, err)
			}
			if !proto.Equal(got, want) {
				t.Fatalf("seed %d %T: protobuf-go decoded\n%v\nwant\n%v", seed, want, got, want)
			}
		}
	}
}

// With at most one entry per map the order of fields is fixed, so the
// bytes must be protobuf-go's.
func TestAppendListingWritesProtobufGosBytes(t *testing.T) {
	for seed := range uint64(50) {
		cs := randomContainers(seed, 3, 1)
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(&runtimeapi.ListContainersResponse{Containers: cs})
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendListing([]byte("prefix"), cs); !bytes.Equal(got[len("prefix"):], want) || string(got[:len("prefix")]) != "prefix" {
			t.Fatalf("seed %d: AppendListing wrote\n%x\nprotobuf-go\n%x", seed, got, want)
		}
	}
}

func TestUnmarshalListingOfNothing(t *testing.T) {
	cs, err := UnmarshalListing(nil)
	if err != nil || cs != nil {
		t.Fatalf("UnmarshalListing(nil) = %v, %v; want nil, nil", cs, err)
	}
}

// field appends a length-delimited field.
func field(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func TestUnmarshalListingDeclines(t *testing.T) {
	valid := AppendListing(nil, randomContainers(1, 1, 2))
	metadata := field(nil, containerMetadata, field(nil, metadataName, []byte("a")))
	entry := field(nil, mapKey, []byte("k"))
	for name, b := range map[string][]byte{
		// protobuf-go keeps these as unknown fields.
		"unknown listing field":   field(nil, 2, nil),
		"unknown container field": field(nil, 1, field(nil, 11, []byte("x"))),
		"unknown metadata field":  field(nil, 1, field(nil, containerMetadata, protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 1))),
		"unknown image field":     field(nil, 1, field(nil, containerImage, field(nil, 3, nil))),
		"mistyped id":             field(nil, 1, protowire.AppendVarint(protowire.AppendTag(nil, containerID, protowire.VarintType), 1)),
		"mistyped state":          field(nil, 1, field(nil, containerState, nil)),
		"unknown map entry field": field(nil, 1, field(nil, containerLabels, field(entry, 3, nil))),
		// protobuf-go merges a repeated sub-message.
		"metadata twice": field(nil, 1, append(metadata, metadata...)),
		// protobuf-go rejects these.
		"invalid UTF-8":       field(nil, 1, field(nil, containerID, []byte{0xff})),
		"invalid UTF-8 key":   field(nil, 1, field(nil, containerAnnotations, field(nil, mapKey, []byte{0xc0}))),
		"invalid UTF-8 value": field(nil, 1, field(nil, containerLabels, field(entry, mapValue, []byte("0123456789\xff")))),
		"truncated":           valid[:len(valid)-1],
		"overlong length":     field(nil, 1, []byte{0x0a, 0x05, 'a'}),
		"field number 0":      {0x02, 0x00},
	} {
		for decoder, decode := range decoders {
			if _, err := decode(b); !errors.Is(err, ErrDeclined) {
				t.Errorf("%s: %s(%x) = %v, want ErrDeclined", name, decoder, b, err)
			}
		}
	}
}

// Benchmarks of a realistic listing: 1024 containers of 36 map entries,
// in ASCII.
func benchmarkListing() ([]*runtimeapi.Container, []byte) {
	r := rand.New(rand.NewPCG(1, 2))
	cs := make([]*runtimeapi.Container, 1024)
	for i := range cs {
		c := &runtimeapi.Container{
			Id:           asciiString(r, 64),
			PodSandboxId: asciiString(r, 64),
			Metadata:     &runtimeapi.ContainerMetadata{Name: asciiString(r, 12), Attempt: 1},
			Image:        &runtimeapi.ImageSpec{Image: asciiString(r, 90)},
			ImageRef:     asciiString(r, 90),
			State:        runtimeapi.ContainerState_CONTAINER_RUNNING,
			CreatedAt:    1_700_000_000_000_000_000 + r.Int64N(1e15),
			Labels:       map[string]string{},
			Annotations:  map[string]string{},
			ImageId:      asciiString(r, 71),
		}
		for j := range 4 {
			c.Labels[fmt.Sprintf("io.kubernetes.label-%d", j)] = asciiString(r, 20)
		}
		for j := range 32 {
			c.Annotations[fmt.Sprintf("example.com/annotation-%d", j)] = asciiString(r, 24)
		}
		cs[i] = c
	}
	return cs, AppendListing(nil, cs)
}

func BenchmarkUnmarshalListing(b *testing.B) {
	_, enc := benchmarkListing()
	b.Run("criwire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := UnmarshalListing(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := proto.Unmarshal(enc, &runtimeapi.ListContainersResponse{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendListing(b *testing.B) {
	cs, enc := benchmarkListing()
	b.Run("criwire", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, len(enc))
		for b.Loop() {
			buf = AppendListing(buf[:0], cs)
		}
	})
	b.Run("protobuf-go", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, len(enc))
		m := &runtimeapi.ListContainersResponse{Containers: cs}
		for b.Loop() {
			var err error
			if buf, err = (proto.MarshalOptions{}).MarshalAppend(buf[:0], m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
