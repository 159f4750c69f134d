package share

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestFieldsCarriesEveryField: nested and repeated messages, optional
// scalars, maps, oneofs and unknown fields all arrive, and nothing of what
// the receiver held before stays.
func TestFieldsCarriesEveryField(t *testing.T) {
	file := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("a.proto"),
		Dependency: []string{"b.proto", "c.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name:  proto.String("M"),
			Field: []*descriptorpb.FieldDescriptorProto{{Name: proto.String("f"), Number: proto.Int32(1)}},
		}},
		Options: &descriptorpb.FileOptions{GoPackage: proto.String("example.com/a")},
	}
	file.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 7))
	got := &descriptorpb.FileDescriptorProto{Package: proto.String("stale"), Syntax: proto.String("stale")}
	Fields(got.ProtoReflect(), file.ProtoReflect())
	if !proto.Equal(got, file) {
		t.Fatalf("received %v, want %v", got, file)
	}

	st, err := structpb.NewStruct(map[string]any{"n": 1.5, "s": "x", "l": []any{true, nil}, "m": map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	gotStruct, _ := structpb.NewStruct(map[string]any{"stale": 1})
	Fields(gotStruct.ProtoReflect(), st.ProtoReflect())
	if !proto.Equal(gotStruct, st) {
		t.Fatalf("received %v, want %v", gotStruct, st)
	}
}

// TestFieldsSharesBytes: the receiver's bytes are the sender's, not a copy;
// that is the point, and the contract that comes with it.
func TestFieldsSharesBytes(t *testing.T) {
	src := wrapperspb.Bytes(make([]byte, 1<<20))
	dst := wrapperspb.Bytes([]byte("stale"))
	Fields(dst.ProtoReflect(), src.ProtoReflect())
	if len(dst.Value) != 1<<20 || &dst.Value[0] != &src.Value[0] {
		t.Fatalf("received %d bytes at %p, sent %d at %p", len(dst.Value), dst.Value, len(src.Value), src.Value)
	}
	empty := &wrapperspb.BytesValue{}
	Fields(dst.ProtoReflect(), empty.ProtoReflect())
	if dst.Value != nil {
		t.Fatalf("an empty message left %d bytes behind", len(dst.Value))
	}
}
