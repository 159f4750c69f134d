package inprocgrpc

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// method is one registered RPC, resolved at registration so that a call
// costs one map lookup and no reflection.
type method struct {
	name   string // "/package.Service/Method"
	srv    any
	unary  grpc.MethodHandler // set for unary methods
	stream grpc.StreamHandler // set for streaming methods
	info   grpc.StreamServerInfo
}

// methodTable is immutable once published: calls read it without a lock,
// and registration replaces it whole.
type methodTable struct {
	methods  map[string]*method
	services map[string]grpc.ServiceInfo
}

// registry holds the services of a Channel.
type registry struct {
	table atomic.Pointer[methodTable]
	mu    sync.Mutex // serializes registrations
}

// RegisterService registers a service implementation, as grpc.Server does;
// generated RegisterXxxServer functions call it. Like grpc.Server, it panics
// if impl does not implement the service or if the service is already
// registered.
func (r *registry) RegisterService(desc *grpc.ServiceDesc, impl any) {
	if impl != nil {
		want := reflect.TypeOf(desc.HandlerType).Elem()
		if got := reflect.TypeOf(impl); !got.Implements(want) {
			panic(fmt.Sprintf("inprocgrpc: RegisterService found the handler of type %v that does not satisfy %v", got, want))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.table.Load()
	next := &methodTable{methods: map[string]*method{}, services: map[string]grpc.ServiceInfo{}}
	if old != nil {
		maps.Copy(next.methods, old.methods)
		maps.Copy(next.services, old.services)
	}
	if _, dup := next.services[desc.ServiceName]; dup {
		panic(fmt.Sprintf("inprocgrpc: RegisterService found duplicate service registration for %q", desc.ServiceName))
	}
	info := grpc.ServiceInfo{Metadata: desc.Metadata}
	for _, md := range desc.Methods {
		name := "/" + desc.ServiceName + "/" + md.MethodName
		next.methods[name] = &method{name: name, srv: impl, unary: md.Handler}
		info.Methods = append(info.Methods, grpc.MethodInfo{Name: md.MethodName})
	}
	for _, sd := range desc.Streams {
		name := "/" + desc.ServiceName + "/" + sd.StreamName
		next.methods[name] = &method{
			name: name, srv: impl, stream: sd.Handler,
			info: grpc.StreamServerInfo{FullMethod: name, IsClientStream: sd.ClientStreams, IsServerStream: sd.ServerStreams},
		}
		info.Methods = append(info.Methods, grpc.MethodInfo{Name: sd.StreamName, IsClientStream: sd.ClientStreams, IsServerStream: sd.ServerStreams})
	}
	next.services[desc.ServiceName] = info
	r.table.Store(next)
}

// GetServiceInfo returns the registered services, as grpc.Server does, so
// that a Channel can be the source of server reflection.
func (r *registry) GetServiceInfo() map[string]grpc.ServiceInfo {
	t := r.table.Load()
	if t == nil {
		return map[string]grpc.ServiceInfo{}
	}
	return maps.Clone(t.services)
}

// lookup finds a method by its full name. Names without the leading slash,
// which some hand-written callers use, are accepted at the price of an
// allocation.
func (r *registry) lookup(name string) *method {
	t := r.table.Load()
	if t == nil {
		return nil
	}
	if m := t.methods[name]; m != nil {
		return m
	}
	if !strings.HasPrefix(name, "/") {
		return t.methods["/"+name]
	}
	return nil
}

// unimplemented is the error for a method not registered, worded as
// grpc.Server words it.
func (r *registry) unimplemented(name string) error {
	service, method, ok := strings.Cut(strings.TrimPrefix(name, "/"), "/")
	if !ok {
		return status.Errorf(codes.Unimplemented, "malformed method name: %q", name)
	}
	if t := r.table.Load(); t != nil {
		if _, known := t.services[service]; known {
			return status.Errorf(codes.Unimplemented, "unknown method %v for service %v", method, service)
		}
	}
	return status.Errorf(codes.Unimplemented, "unknown service %v", service)
}
