// Package share hands a protobuf message's field values to another message
// of the same type without copying them. go/inprocgrpc's shared-message
// mode uses it, and the tournament gives grpchan the same function, so that
// the two channels are compared doing the same work.
package share

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Fields makes dst hold src's fields and nothing else. Scalars are copied;
// bytes, strings, sub-messages, lists, maps and unknown fields are not, so
// afterwards both messages refer to the same memory and neither may be
// changed while the other is in use. dst and src must be of one type.
//
// It costs a few field assignments whatever the message's size, where
// proto.Merge allocates and copies every byte.
func Fields(dst, src protoreflect.Message) {
	proto.Reset(dst.Interface())
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, v)
		return true
	})
	if u := src.GetUnknown(); len(u) > 0 {
		dst.SetUnknown(u)
	}
}
