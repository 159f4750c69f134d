package clonepb_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/grpcbench/grpcbench/go/inprocgrpc/internal/clonepb"
)

// The generated copies (vtprotobuf's CloneVT, and CopyMessageVT over it)
// must be what proto.Clone makes: the same bytes under a deterministic
// marshal, and no memory shared with the original.
func FuzzGeneratedCopies(f *testing.F) {
	for seed := range uint64(20) {
		f.Add(seed, seed*7919)
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		r := rand.New(rand.NewPCG(s1, s2))
		checkCopies(t, randomEverything(r, 3), randomEverything(r, 2))
		checkCopies(t, randomPlain2(r, 3), &pb.Plain2{S: proto.String("stale")})
	})
}

// The same over whatever protobuf-go decodes from arbitrary bytes: field
// shapes the generator above does not think of, unknown fields of every
// wire type included.
func FuzzGeneratedCopiesOfDecodedMessages(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(randomEverything(r, 2))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m pb.Everything
		if proto.Unmarshal(b, &m) == nil {
			checkCopies(t, &m, &pb.Everything{S: "stale"})
		}
		var m2 pb.Plain2
		if proto.Unmarshal(b, &m2) == nil {
			checkCopies(t, &m2, &pb.Plain2{})
		}
	})
}

// A message that may carry extensions, or holds one that may or a
// well-known type, gets no generated copy code: CloneVT would drop the
// extensions and the well-known types' unknown fields, which proto.Merge
// keeps.
func TestNoGeneratedCopiesWhereCloneVTLosesFields(t *testing.T) {
	type copier interface{ CopyMessageVT(proto.Message) }
	for _, m := range []proto.Message{&pb.Extendable{}, &pb.HoldsExtendable{}, &pb.WithWellKnown{}} {
		if _, ok := m.(copier); ok {
			t.Errorf("%T has generated copy code, which would drop its extensions", m)
		}
	}
	for _, m := range []proto.Message{&pb.Plain2{}, &pb.Everything{}, &pb.Leaf{}, &pb.Everything_Inner{}} {
		if _, ok := m.(copier); !ok {
			t.Errorf("%T has no generated copy code", m)
		}
	}
}

// A few shapes the random ones may miss: nothing set, a nil message,
// present but empty optional fields, and an empty oneof member.
func TestGeneratedCopiesOfEdgeCases(t *testing.T) {
	zero, one := int32(0), ""
	for _, m := range []*pb.Everything{
		{},
		{OptI32: &zero, OptS: &one, OptBy: []byte{}},
		{Choice: &pb.Everything_CBy{}},
		{Choice: &pb.Everything_CLeaf{}},
		{Child: &pb.Everything{}, Inner: &pb.Everything_Inner{Nested: map[uint32]*pb.Everything{1: {}}}},
	} {
		checkCopies(t, m, &pb.Everything{S: "stale", Children: []*pb.Everything{{}}})
	}
	var nilMessage *pb.Everything
	if nilMessage.CloneVT() != nil {
		t.Error("a nil message cloned to a non-nil one")
	}
	dst := &pb.Everything{S: "stale"}
	nilMessage.CopyMessageVT(dst)
	if !proto.Equal(dst, &pb.Everything{}) {
		t.Errorf("copying a nil message left %v", dst)
	}
}

// vtMessage is a message with generated clone, copy and move code.
type vtMessage[T any] interface {
	proto.Message
	CloneVT() T
	CopyMessageVT(proto.Message)
	MoveMessageVT(proto.Message)
}

// checkCopies checks CloneVT, CopyMessageVT over stale, and MoveMessageVT
// of a clone: each must marshal to the original's bytes, as proto.Clone's
// copy does. The one exception is proto.Clone's: its merge skips a proto3
// float or double without presence that holds negative zero (the value
// compares equal to zero), so its copy is not even proto.Equal to the
// original, while the generated copies keep it, as the wire does.
func checkCopies[T vtMessage[T]](t *testing.T, m, stale T) {
	t.Helper()
	want := marshal(t, m)
	if cloned := marshal(t, proto.Clone(m)); !bytes.Equal(cloned, want) &&
		!holdsImplicitNegativeZero(m.ProtoReflect()) {
		t.Fatalf("proto.Clone changed the bytes: %x, want %x", cloned, want)
	}
	clone := m.CloneVT()
	if got := marshal(t, clone); !bytes.Equal(got, want) {
		t.Fatalf("CloneVT: %x\noriginal: %x", got, want)
	}
	copied := stale
	m.CopyMessageVT(copied)
	if got := marshal(t, copied); !bytes.Equal(got, want) {
		t.Fatalf("CopyMessageVT over %v: %x\noriginal: %x", stale, got, want)
	}
	if !proto.Equal(copied, m) {
		t.Fatalf("CopyMessageVT: not proto.Equal")
	}
	moved := m.CloneVT()
	into := proto.Clone(stale).(T)
	moved.MoveMessageVT(into)
	if got := marshal(t, into); !bytes.Equal(got, want) {
		t.Fatalf("MoveMessageVT: %x\noriginal: %x", got, want)
	}
	if got := marshal(t, moved); len(got) != 0 {
		t.Fatalf("MoveMessageVT left %x in the message moved from", got)
	}
	// Changing the copies in place must leave the original as it was.
	scribble(clone.ProtoReflect())
	scribble(copied.ProtoReflect())
	if got := marshal(t, m); !bytes.Equal(got, want) {
		t.Fatalf("changing a copy changed the original")
	}
}

// holdsImplicitNegativeZero reports whether m, or a message inside it, has
// a float or double field without presence set to negative zero: the
// value proto.Merge does not copy.
func holdsImplicitNegativeZero(m protoreflect.Message) bool {
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, e protoreflect.Value) bool {
					found = holdsImplicitNegativeZero(e.Message())
					return !found
				})
			}
		case fd.IsList():
			if fd.Message() != nil {
				for i := range v.List().Len() {
					if found = holdsImplicitNegativeZero(v.List().Get(i).Message()); found {
						break
					}
				}
			}
		case fd.Message() != nil:
			found = holdsImplicitNegativeZero(v.Message())
		case !fd.HasPresence() && (fd.Kind() == protoreflect.FloatKind || fd.Kind() == protoreflect.DoubleKind):
			found = v.Float() == 0 && math.Signbit(v.Float())
		}
		return !found
	})
	return found
}

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scribble changes every byte, map and sub-message reachable from m in
// place, where a copy that shared memory with its original would show it.
func scribble(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			mp := v.Map()
			mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				scribbleValue(fd.MapValue(), v)
				return true
			})
			if fd.MapKey().Kind() == protoreflect.StringKind && fd.MapValue().Kind() == protoreflect.StringKind {
				mp.Set(protoreflect.ValueOfString("scribbled").MapKey(), protoreflect.ValueOfString("x"))
			}
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.BytesKind {
					scribbleValue(fd, l.Get(i))
				} else {
					l.Set(i, other(fd, l.Get(i)))
				}
			}
		default:
			scribbleValue(fd, v)
		}
		return true
	})
	if u := m.GetUnknown(); len(u) > 0 {
		u[len(u)-1] ^= 0xff
	}
}

// other is a value of fd's kind unlike v, for scalars a shared list would
// show.
func other(fd protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(^int32(v.Int()))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(^v.Int())
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(v.Enum() + 1)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(v.String() + "x")
	}
	return v
}

func scribbleValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.BytesKind:
		for i, b := range v.Bytes() {
			v.Bytes()[i] = ^b
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		scribble(v.Message())
	}
}

func randomLeaf(r *rand.Rand) *pb.Leaf {
	if r.IntN(4) == 0 {
		return nil
	}
	l := &pb.Leaf{Name: randomString(r), Data: randomBytes(r)}
	for range r.IntN(4) {
		l.Values = append(l.Values, r.Int64()-math.MaxInt64/2)
	}
	return l
}

// randomString is valid UTF-8, as proto3 strings must be.
func randomString(r *rand.Rand) string {
	rs := make([]rune, r.IntN(12))
	for i := range rs {
		rs[i] = rune(r.IntN(0x800))
	}
	return string(rs)
}

// randomBytes is nil, empty or up to 40 random octets.
func randomBytes(r *rand.Rand) []byte {
	switch r.IntN(5) {
	case 0:
		return nil
	case 1:
		return []byte{}
	}
	b := make([]byte, r.IntN(40))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func randomEverything(r *rand.Rand, depth int) *pb.Everything {
	m := &pb.Everything{
		I32: r.Int32() - math.MaxInt32/2, I64: r.Int64(), U32: r.Uint32(), U64: r.Uint64(),
		S32: -r.Int32(), S64: -r.Int64(), F32: r.Uint32(), F64: r.Uint64(),
		Sf32: r.Int32(), Sf64: -r.Int64(), Fl: r.Float32(), Db: r.NormFloat64(),
		B: r.IntN(2) == 0, S: randomString(r), By: randomBytes(r), Color: pb.Color(r.IntN(4)),
		Leaf: randomLeaf(r),
	}
	if r.IntN(2) == 0 {
		v, s := r.Int32(), randomString(r)
		m.OptI32, m.OptS, m.OptBy = &v, &s, randomBytes(r)
	}
	for range r.IntN(4) {
		m.RI32 = append(m.RI32, r.Int32())
		m.RS = append(m.RS, randomString(r))
		m.RBy = append(m.RBy, randomBytes(r))
		m.RColor = append(m.RColor, pb.Color(r.IntN(3)))
		if l := randomLeaf(r); l != nil {
			m.RLeaf = append(m.RLeaf, l)
		}
	}
	if r.IntN(2) == 0 {
		m.MSs, m.MIb, m.MLeaf = map[string]string{}, map[int64][]byte{}, map[string]*pb.Leaf{}
		for range r.IntN(4) {
			m.MSs[randomString(r)] = randomString(r)
			m.MIb[r.Int64()] = randomBytes(r)
			if l := randomLeaf(r); l != nil {
				m.MLeaf[randomString(r)] = l
			}
		}
	}
	switch r.IntN(5) {
	case 1:
		m.Choice = &pb.Everything_CI32{CI32: r.Int32()}
	case 2:
		m.Choice = &pb.Everything_CS{CS: randomString(r)}
	case 3:
		m.Choice = &pb.Everything_CBy{CBy: randomBytes(r)}
	case 4:
		m.Choice = &pb.Everything_CLeaf{CLeaf: randomLeaf(r)}
	}
	if depth > 0 {
		if r.IntN(2) == 0 {
			m.Child = randomEverything(r, depth-1)
		}
		for range r.IntN(3) {
			m.Children = append(m.Children, randomEverything(r, depth-1))
		}
		if r.IntN(2) == 0 {
			m.Inner = &pb.Everything_Inner{Tags: []string{randomString(r)}, Nested: map[uint32]*pb.Everything{r.Uint32(): randomEverything(r, depth-1)}}
		}
	}
	if r.IntN(3) == 0 {
		// An unknown field, as a newer peer's message would carry.
		u := protowire.AppendTag(nil, 999, protowire.BytesType)
		m.ProtoReflect().SetUnknown(protowire.AppendBytes(u, randomBytes(r)))
	}
	return m
}

func randomPlain2(r *rand.Rand, depth int) *pb.Plain2 {
	m := &pb.Plain2{}
	if r.IntN(2) == 0 {
		m.N = proto.Int32(r.Int32N(3)) // 0 too: present, though zero
	}
	if r.IntN(2) == 0 {
		m.B = randomBytes(r)
	}
	if r.IntN(2) == 0 {
		m.S = proto.String(randomString(r))
	}
	for range r.IntN(3) {
		m.R = append(m.R, randomString(r))
	}
	if depth > 0 && r.IntN(2) == 0 {
		m.Next = randomPlain2(r, depth-1)
	}
	return m
}
