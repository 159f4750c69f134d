package inprocgrpc_test

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"

	"github.com/grpcbench/grpcbench/go/inprocgrpc"
)

// jsonCodec carries any JSON-encodable value: with WithCodec, messages need
// not be protobuf messages at all.
type jsonCodec struct{}

func (jsonCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, err := json.Marshal(v)
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}

func (jsonCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return json.Unmarshal(data.Materialize(), v)
}

func (jsonCodec) Name() string { return "json" }

type point struct{ X, Y int }

// pointService is a hand-written service over plain Go structs.
type pointService interface{ Double(point) point }

type doubler struct{}

func (doubler) Double(p point) point { return point{2 * p.X, 2 * p.Y} }

var pointServiceDesc = grpc.ServiceDesc{
	ServiceName: "test.Points",
	HandlerType: (*pointService)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Double",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var p point
			if err := dec(&p); err != nil {
				return nil, err
			}
			r := srv.(pointService).Double(p)
			return &r, nil
		},
	}},
}

func TestCodecCarriesNonProtoMessages(t *testing.T) {
	ctx := testContext(t)
	ch := inprocgrpc.New(inprocgrpc.WithCodec(jsonCodec{}))
	ch.RegisterService(&pointServiceDesc, doubler{})
	var out point
	if err := ch.Invoke(ctx, "/test.Points/Double", &point{1, 2}, &out); err != nil || out != (point{2, 4}) {
		t.Fatalf("Double = %v, %v", out, err)
	}

	// Without a codec, a non-proto message is an Internal error, not a panic.
	plain := inprocgrpc.New()
	plain.RegisterService(&pointServiceDesc, doubler{})
	wantCode(t, plain.Invoke(ctx, "/test.Points/Double", &point{1, 2}, &out), codes.Internal)
}
