package inprocgrpc

import (
	"reflect"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// copier carries a unary RPC's messages: each crosses once, in one step.
type copier interface {
	// copy makes dst hold src's contents, replacing its own: an independent
	// copy, except with sharedCopy.
	copy(dst, src any) error
}

// transfer carries messages between client and server so that the two never
// share one, as they would not over a network. Unary RPCs may trade that for
// speed (sharedCopy); streams always copy.
type transfer interface {
	copier
	// detach returns a private copy of m for a stream's queue; the sender
	// may change m as soon as it returns. cache is the sending side's; with
	// nil, the copy is not a pooled carrier.
	detach(m any, cache *carrierCache) (frame, error)
	// attach fills dst from a frame made by detach. A carrier is recycled
	// and the frame spent; any other frame may be attached again, until
	// released.
	attach(dst any, f frame) error
}

// frame is one entry of a stream's queue.
type frame struct {
	// msg is the message (a carrier or a clone), or, in the response queue,
	// possibly a metadata.MD: the header, ahead of every message.
	msg any
	// carrier is the pool msg returns to once delivered, if it is a carrier.
	carrier *carrierPool
	// data is the message's encoding, with WithCodec.
	data mem.BufferSlice
}

// release frees what the frame holds once it has been attached.
func (f frame) release() { f.data.Free() }

// protoTransfer copies protobuf messages field by field: no bytes, no
// encoding, only the fields that are set. A type with generated copy code
// (generatedCopier) is copied by it, the rest with proto.Merge, unless
// reflectOnly.
type protoTransfer struct{ reflectOnly bool }

// generatedCopier is a message type with generated copy code: CloneVT and
// CloneMessageVT as vtprotobuf's clone feature writes them, and
// CopyMessageVT and MoveMessageVT from
// //go/inprocgrpc/cmd/protoc-gen-go-vtcopy, which fill another message of
// the type with a copy, or with the message's own fields. The copies are
// those proto.Clone and proto.Merge make, without reflection.
type generatedCopier interface {
	CloneMessageVT() proto.Message
	CopyMessageVT(dst proto.Message)
	MoveMessageVT(dst proto.Message)
}

// copier returns src's generated copy code, if t uses it, src's type has
// it, and dst is a message of src's Go type (asProto's views of legacy
// messages, and types that embed a generated one, are not).
func (t protoTransfer) copier(dst, src any) generatedCopier {
	if t.reflectOnly {
		return nil
	}
	c, ok := src.(generatedCopier)
	if !ok {
		return nil
	}
	d, ok := dst.(proto.Message)
	if !ok || reflect.TypeOf(d) != reflect.TypeOf(c) || reflect.TypeOf(d.ProtoReflect().Interface()) != reflect.TypeOf(d) {
		return nil
	}
	return c
}

// asProto returns m as a protobuf message: itself, or a view of a legacy
// (github.com/golang/protobuf era) message, as grpc's codec sees it.
func asProto(m any) (proto.Message, bool) {
	switch m := m.(type) {
	case proto.Message:
		return m, true
	case protoadapt.MessageV1:
		return protoadapt.MessageV2Of(m), true
	}
	return nil, false
}

func (t protoTransfer) copy(dst, src any) error {
	d, s, err := protoPair(dst, src)
	if err != nil || d == nil {
		return err
	}
	if c := t.copier(dst, src); c != nil {
		c.CopyMessageVT(dst.(proto.Message))
		return nil
	}
	proto.Reset(d.Interface())
	if s.IsValid() { // a nil message arrives empty, as it would off the wire
		proto.Merge(d.Interface(), s.Interface())
	}
	return nil
}

// protoPair returns dst and src as protobuf messages of one type, or an
// error saying why they are not. Both are nil when dst is src: there is
// nothing to move.
func protoPair(dst, src any) (d, s protoreflect.Message, err error) {
	if dst == src {
		return nil, nil, nil
	}
	dm, ok := asProto(dst)
	if !ok {
		return nil, nil, internalError("cannot copy into %T: not a proto.Message (use WithCodec)", dst)
	}
	sm, ok := asProto(src)
	if !ok {
		return nil, nil, internalError("cannot copy %T: not a proto.Message (use WithCodec)", src)
	}
	d, s = dm.ProtoReflect(), sm.ProtoReflect()
	if !d.IsValid() {
		return nil, nil, internalError("cannot copy into a nil %T", dst)
	}
	if dd, sd := d.Descriptor(), s.Descriptor(); dd != sd && dd.FullName() != sd.FullName() {
		return nil, nil, internalError("cannot copy %v into %v", sd.FullName(), dd.FullName())
	}
	return d, s, nil
}

func (t protoTransfer) detach(m any, cache *carrierCache) (frame, error) {
	pm, ok := m.(proto.Message)
	if ok && cache != nil {
		if cp := cache.get(pm); cp != nil {
			c := cp.pool.Get().(proto.Message)
			if g := t.copier(c, pm); g != nil {
				g.CopyMessageVT(c)
			} else if pm.ProtoReflect().IsValid() { // a nil message travels empty
				proto.Merge(c, pm)
			}
			return frame{msg: c, carrier: cp}, nil
		}
	}
	if pm, ok = asProto(m); !ok {
		return frame{}, internalError("cannot send %T: not a proto.Message (use WithCodec)", m)
	}
	if r := pm.ProtoReflect(); !r.IsValid() {
		return frame{msg: r.Type().New().Interface()}, nil
	}
	if g := t.copier(m, m); g != nil {
		return frame{msg: g.CloneMessageVT()}, nil
	}
	return frame{msg: proto.Clone(pm)}, nil
}

// attach fills dst from a frame. A carrier of a type with generated copy
// code hands its fields over (MoveMessageVT): nobody else holds it, so the
// message crosses with the one copy detach made. Any other carrier is
// merged into dst, the supported way to fill a message from another:
// protobuf-go forbids copying a message struct, and moving the field values
// one by one through protoreflect measured slower than this copy (see
// README.md). The carrier is then reset and recycled, so it keeps nothing
// of what it carried.
func (t protoTransfer) attach(dst any, f frame) error {
	if f.carrier == nil {
		return t.copy(dst, f.msg)
	}
	c := f.msg.(proto.Message)
	var err error
	if g := t.copier(dst, c); g != nil {
		g.MoveMessageVT(dst.(proto.Message))
	} else {
		err = t.copy(dst, c)
	}
	f.carrier.put(c)
	return err
}

// codecTransfer round-trips every message through a codec, as a network
// transport does.
type codecTransfer struct{ codec encoding.CodecV2 }

func (t codecTransfer) copy(dst, src any) error {
	data, err := t.codec.Marshal(src)
	if err != nil {
		return internalError("marshalling %T: %v", src, err)
	}
	defer data.Free()
	if err := t.codec.Unmarshal(data, dst); err != nil {
		return internalError("unmarshalling %T: %v", dst, err)
	}
	return nil
}

func (t codecTransfer) detach(m any, _ *carrierCache) (frame, error) {
	data, err := t.codec.Marshal(m)
	if err != nil {
		return frame{}, internalError("marshalling %T: %v", m, err)
	}
	return frame{data: data}, nil
}

func (t codecTransfer) attach(dst any, f frame) error {
	if err := t.codec.Unmarshal(f.data, dst); err != nil {
		return internalError("unmarshalling %T: %v", dst, err)
	}
	return nil
}
