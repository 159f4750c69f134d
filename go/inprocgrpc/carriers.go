package inprocgrpc

import (
	"reflect"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/runtime/protoimpl"
)

// A streamed message travels in a carrier: a message of its type that the
// sender fills (proto.Merge) and the receiver merges into its own message.
// Carriers are recycled, one pool per message type, because a fresh one per
// message (what proto.Clone makes) costs an allocation and a reflect.New: a
// third of a small message's trip.
type carrierPool struct {
	pool sync.Pool
}

// carrierPools maps a message's Go type to its *carrierPool, or to nil for
// types that are not pooled.
var carrierPools sync.Map

// messageStateType is the first field of every generated message struct.
var messageStateType = reflect.TypeFor[protoimpl.MessageState]()

// carriersFor returns the pool for messages of Go type t (a pointer to a
// struct), or nil if t is not a generated message type. Only for those
// does the Go type name one message type, so that any carrier of the pool
// fits any message of the type; one Go type for many message types
// (dynamicpb.Message) travels as clones instead.
func carriersFor(t reflect.Type, m proto.Message) *carrierPool {
	if p, ok := carrierPools.Load(t); ok {
		return p.(*carrierPool)
	}
	var cp *carrierPool
	if e := t.Elem(); e.Kind() == reflect.Struct && e.NumField() > 0 && e.Field(0).Type == messageStateType {
		mt := m.ProtoReflect().Type()
		cp = &carrierPool{}
		cp.pool.New = func() any { return mt.New().Interface() }
	}
	p, _ := carrierPools.LoadOrStore(t, cp)
	return p.(*carrierPool)
}

// put empties a carrier whose fields were moved out (or copied) and puts it
// back; c must not be used afterwards.
func (cp *carrierPool) put(c proto.Message) {
	proto.Reset(c) // it must not keep the receiver's fields alive
	cp.pool.Put(c)
}

// carrierCache remembers the pool of the last type a stream direction sent,
// saving the map lookup: a stream sends one type.
type carrierCache struct {
	t  reflect.Type
	cp *carrierPool
}

func (c *carrierCache) get(m proto.Message) *carrierPool {
	t := reflect.TypeOf(m)
	if t != c.t {
		c.t, c.cp = t, carriersFor(t, m)
	}
	return c.cp
}
