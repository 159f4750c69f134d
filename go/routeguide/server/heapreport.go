package main

import (
	"context"
	"runtime"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// heapReportDesc serves the heap in use at the path clgrpc's servers serve
// it on (clgrpc.grpc:register-heap-report), so that hostile-peer tests read
// both servers alike. RSS alone cannot show what a server holds: memory
// allocated but never touched is not resident.
var heapReportDesc = grpc.ServiceDesc{
	ServiceName: "clgrpc.Diagnostics",
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "HeapInUse", Handler: heapInUse}},
}

// heapInUse answers a google.protobuf.UInt64Value of the heap in use
// (HeapInuse) after a collection.
func heapInUse(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	if err := dec(new(emptypb.Empty)); err != nil {
		return nil, err
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return wrapperspb.UInt64(m.HeapInuse), nil
}
