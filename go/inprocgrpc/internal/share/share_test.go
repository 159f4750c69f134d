package share

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestFieldsCarriesEveryField: nested messages, lists, maps, oneofs and
// unknown fields all arrive, and nothing of what the receiver held before
// stays.
func TestFieldsCarriesEveryField(t *testing.T) {
	st, err := structpb.NewStruct(map[string]any{"n": 1.5, "s": "x", "l": []any{true, nil}, "m": map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	st.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 7))
	got, _ := structpb.NewStruct(map[string]any{"stale": 1})
	Fields(got.ProtoReflect(), st.ProtoReflect())
	if !proto.Equal(got, st) {
		t.Fatalf("received %v, want %v", got, st)
	}
	if len(got.ProtoReflect().GetUnknown()) == 0 {
		t.Fatal("the unknown field did not arrive")
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
