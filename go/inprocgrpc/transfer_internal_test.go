package inprocgrpc

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/clonepb"
)

// TestAttachCarriesEveryField checks the carrier path of a stream message:
// nested messages, repeated and optional fields and unknown fields all
// arrive, whatever the receiver held before, and the carrier keeps none of
// them once recycled.
func TestAttachCarriesEveryField(t *testing.T) {
	sent := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("a.proto"),
		Dependency: []string{"b.proto", "c.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name:  proto.String("M"),
			Field: []*descriptorpb.FieldDescriptorProto{{Name: proto.String("f"), Number: proto.Int32(1)}},
		}},
		Options: &descriptorpb.FileOptions{GoPackage: proto.String("example.com/a")},
	}
	sent.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 7))
	want := proto.Clone(sent)

	var cache carrierCache
	f, err := protoTransfer{}.detach(sent, &cache)
	if err != nil {
		t.Fatal(err)
	}
	if f.carrier == nil {
		t.Fatal("a generated message type travelled without a carrier")
	}
	sent.MessageType[0].Name = proto.String("changed after send")

	got := &descriptorpb.FileDescriptorProto{Package: proto.String("stale"), Syntax: proto.String("stale")}
	if err := (protoTransfer{}).attach(got, f); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
	if c := f.msg.(proto.Message); proto.Size(c) != 0 {
		t.Fatalf("the recycled carrier still holds %v", c)
	}
}

// TestAttachIntoOtherMessageTypeFails checks that a carrier is not merged
// into a message of another type.
func TestAttachIntoOtherMessageTypeFails(t *testing.T) {
	var cache carrierCache
	f, err := protoTransfer{}.detach(&descriptorpb.FileOptions{GoPackage: proto.String("x")}, &cache)
	if err != nil {
		t.Fatal(err)
	}
	got := &descriptorpb.FieldOptions{}
	if err := (protoTransfer{}).attach(got, f); err == nil {
		t.Fatalf("attaching google.protobuf.FileOptions into FieldOptions succeeded: %v", got)
	}
}

// A type with generated copy code is copied by it, into a message of its
// own type only, and by proto.Merge where the channel is told not to; the
// copies are independent of the original whichever way they are made.
func TestGeneratedCopiesWhereTheTypeHasThem(t *testing.T) {
	msg := &clonepb.Everything{By: []byte("abc"), Children: []*clonepb.Everything{{S: "child"}}}
	if (protoTransfer{}).copier(&clonepb.Everything{}, msg) == nil {
		t.Error("a type with CopyMessageVT is not copied by it")
	}
	if (protoTransfer{reflectOnly: true}).copier(&clonepb.Everything{}, msg) != nil {
		t.Error("reflectOnly still uses the generated code")
	}
	dyn := dynamicpb.NewMessage(msg.ProtoReflect().Descriptor())
	if (protoTransfer{}).copier(dyn, msg) != nil {
		t.Error("generated code would fill a message of another Go type")
	}
	type embedding struct{ *clonepb.Everything }
	if (protoTransfer{}).copier(embedding{&clonepb.Everything{}}, embedding{msg}) != nil {
		t.Error("generated code would fill a type that embeds the generated one")
	}
	for _, xfer := range []protoTransfer{{}, {reflectOnly: true}} {
		for _, dst := range []proto.Message{&clonepb.Everything{S: "stale"}, dynamicpb.NewMessage(msg.ProtoReflect().Descriptor())} {
			if err := xfer.copy(dst, msg); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(dst, msg) {
				t.Errorf("%+v into %T: got %v, want %v", xfer, dst, dst, msg)
			}
		}
		f, err := xfer.detach(msg, &carrierCache{})
		if err != nil {
			t.Fatal(err)
		}
		msg.By[0] = 'x'
		got := &clonepb.Everything{}
		if err := xfer.attach(got, f); err != nil {
			t.Fatal(err)
		}
		if string(got.By) != "abc" || got.Children[0].S != "child" {
			t.Errorf("%+v: a detached message changed with its sender's: %v", xfer, got)
		}
		msg.By[0] = 'a'
	}
}

// A stream message of a type with generated code crosses with one copy:
// the carrier's fields are handed to the receiver, and the carrier goes
// back empty. Extensions, which generated code does not copy, arrive
// through proto.Merge.
func TestCarriersHandTheirFieldsOver(t *testing.T) {
	var cache carrierCache
	sent := &clonepb.Everything{By: []byte("payload"), Children: []*clonepb.Everything{{S: "child"}}}
	f, err := protoTransfer{}.detach(sent, &cache)
	if err != nil || f.carrier == nil {
		t.Fatalf("detach: %v, carrier %v", err, f.carrier)
	}
	carried := f.msg.(*clonepb.Everything).By
	got := &clonepb.Everything{S: "stale"}
	if err := (protoTransfer{}).attach(got, f); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, sent) || &got.By[0] != &carried[0] {
		t.Errorf("received %v (bytes at %p), want %v in the carrier's bytes at %p", got, got.By, sent, carried)
	}
	if &got.By[0] == &sent.By[0] {
		t.Error("the receiver shares the sender's bytes")
	}

	ext := &clonepb.HoldsExtendable{E: &clonepb.Extendable{A: proto.Int32(1)}}
	proto.SetExtension(ext.E, clonepb.E_Note, "kept")
	f, err = protoTransfer{}.detach(ext, &cache)
	if err != nil {
		t.Fatal(err)
	}
	gotExt := &clonepb.HoldsExtendable{}
	if err := (protoTransfer{}).attach(gotExt, f); err != nil {
		t.Fatal(err)
	}
	if proto.GetExtension(gotExt.GetE(), clonepb.E_Note) != "kept" {
		t.Errorf("an extension was lost on the way: %v", gotExt)
	}
}

// A message holding well-known types, whose generated clone code would drop
// their unknown fields, is merged instead, and keeps them.
func TestWellKnownTypesKeepTheirUnknownFields(t *testing.T) {
	st := &structpb.Struct{}
	st.ProtoReflect().SetUnknown(protowire.AppendFixed64(protowire.AppendTag(nil, 1, protowire.Fixed64Type), 1))
	sent := &clonepb.WithWellKnown{St: st}
	got := &clonepb.WithWellKnown{}
	if err := (protoTransfer{}).copy(got, sent); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, sent) || len(got.St.ProtoReflect().GetUnknown()) == 0 {
		t.Errorf("copied %v, want %v with its unknown field", got, sent)
	}
}
