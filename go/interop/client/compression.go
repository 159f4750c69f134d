package main

import (
	"context"
	"log"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding/gzip"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// The four compression cases of gRPC's interop test descriptions, which
// grpc-go's interop package does not implement. Failures end the process
// through log.Fatalf, as the package's own cases do.

const (
	largeRequestSize  = 271828
	largeResponseSize = 314159
)

func zeros(n int) *testpb.Payload {
	return &testpb.Payload{Type: testpb.PayloadType_COMPRESSABLE, Body: make([]byte, n)}
}

func largeRequest(expectCompressed, responseCompressed *testpb.BoolValue) *testpb.SimpleRequest {
	return &testpb.SimpleRequest{
		ResponseType:       testpb.PayloadType_COMPRESSABLE,
		ResponseSize:       largeResponseSize,
		Payload:            zeros(largeRequestSize),
		ExpectCompressed:   expectCompressed,
		ResponseCompressed: responseCompressed,
	}
}

func checkBody(what string, p *testpb.Payload, size int) {
	if got := len(p.GetBody()); got != size {
		log.Fatalf("%s: payload of %d bytes, want %d", what, got, size)
	}
}

func doClientCompressedUnary(ctx context.Context, tc testgrpc.TestServiceClient, _ ...grpc.CallOption) {
	expect := &testpb.BoolValue{Value: true}
	_, err := tc.UnaryCall(ctx, largeRequest(expect, nil))
	if status.Code(err) != codes.InvalidArgument {
		log.Fatalf("probe (uncompressed, expect_compressed): %v, want InvalidArgument", err)
	}
	reply, err := tc.UnaryCall(ctx, largeRequest(expect, nil), grpc.UseCompressor(gzip.Name))
	if err != nil {
		log.Fatalf("compressed request: %v", err)
	}
	checkBody("compressed request", reply.GetPayload(), largeResponseSize)
	reply, err = tc.UnaryCall(ctx, largeRequest(&testpb.BoolValue{Value: false}, nil))
	if err != nil {
		log.Fatalf("uncompressed request: %v", err)
	}
	checkBody("uncompressed request", reply.GetPayload(), largeResponseSize)
}

// doClientCompressedStreaming differs from the descriptions in one point:
// grpc-go compresses every message of a call that uses a compressor, so
// its second message goes compressed too, still with expect_compressed
// false, which a server accepts (it only checks that an expected
// compression is there).
func doClientCompressedStreaming(ctx context.Context, tc testgrpc.TestServiceClient, _ ...grpc.CallOption) {
	probe, err := tc.StreamingInputCall(ctx)
	if err != nil {
		log.Fatalf("probe: %v", err)
	}
	if err := probe.Send(&testpb.StreamingInputCallRequest{
		ExpectCompressed: &testpb.BoolValue{Value: true}, Payload: zeros(27182),
	}); err != nil {
		log.Fatalf("probe Send: %v", err)
	}
	if _, err := probe.CloseAndRecv(); status.Code(err) != codes.InvalidArgument {
		log.Fatalf("probe (uncompressed, expect_compressed): %v, want InvalidArgument", err)
	}
	stream, err := tc.StreamingInputCall(ctx, grpc.UseCompressor(gzip.Name))
	if err != nil {
		log.Fatalf("StreamingInputCall: %v", err)
	}
	for _, req := range []*testpb.StreamingInputCallRequest{
		{ExpectCompressed: &testpb.BoolValue{Value: true}, Payload: zeros(27182)},
		{ExpectCompressed: &testpb.BoolValue{Value: false}, Payload: zeros(45904)},
	} {
		if err := stream.Send(req); err != nil {
			log.Fatalf("Send: %v", err)
		}
	}
	reply, err := stream.CloseAndRecv()
	if err != nil {
		log.Fatalf("CloseAndRecv: %v", err)
	}
	if got := reply.GetAggregatedPayloadSize(); got != 73086 {
		log.Fatalf("aggregated_payload_size %d, want 73086", got)
	}
}

func doServerCompressedUnary(ctx context.Context, tc testgrpc.TestServiceClient, _ ...grpc.CallOption) {
	for _, compressed := range []bool{true, false} {
		received.reset()
		reply, err := tc.UnaryCall(ctx, largeRequest(nil, &testpb.BoolValue{Value: compressed}))
		if err != nil {
			log.Fatalf("response_compressed %v: %v", compressed, err)
		}
		checkBody("response", reply.GetPayload(), largeResponseSize)
		received.check([]bool{compressed})
	}
}

func doServerCompressedStreaming(ctx context.Context, tc testgrpc.TestServiceClient, _ ...grpc.CallOption) {
	sizes, compressed := []int32{31415, 92653}, []bool{true, false}
	req := &testpb.StreamingOutputCallRequest{ResponseType: testpb.PayloadType_COMPRESSABLE}
	for i, size := range sizes {
		req.ResponseParameters = append(req.ResponseParameters, &testpb.ResponseParameters{
			Size: size, Compressed: &testpb.BoolValue{Value: compressed[i]},
		})
	}
	received.reset()
	stream, err := tc.StreamingOutputCall(ctx, req)
	if err != nil {
		log.Fatalf("StreamingOutputCall: %v", err)
	}
	for i, size := range sizes {
		reply, err := stream.Recv()
		if err != nil {
			log.Fatalf("response %d: %v", i, err)
		}
		checkBody("response", reply.GetPayload(), int(size))
	}
	if _, err := stream.Recv(); err == nil {
		log.Fatalf("more than %d responses", len(sizes))
	}
	received.check(compressed)
}

// compressionRecorder notes, for each message the client receives, whether
// it came compressed: grpc-go does not show the message's compressed flag,
// but its stats do show the length on the wire beside the decompressed one,
// and the zero-filled payloads of these cases shrink by far when compressed.
type compressionRecorder struct {
	mu         sync.Mutex
	compressed []bool
}

var received = &compressionRecorder{}

func (r *compressionRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.compressed = nil
}

func (r *compressionRecorder) check(want []bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.compressed) != len(want) {
		log.Fatalf("received %d messages, want %d", len(r.compressed), len(want))
	}
	for i := range want {
		if r.compressed[i] != want[i] {
			log.Fatalf("response %d compressed: %v, want %v", i, r.compressed[i], want[i])
		}
	}
}

func (r *compressionRecorder) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}

func (r *compressionRecorder) HandleRPC(_ context.Context, s stats.RPCStats) {
	if p, ok := s.(*stats.InPayload); ok && p.Client {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.compressed = append(r.compressed, p.CompressedLength < p.Length)
	}
}

func (r *compressionRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}

func (r *compressionRecorder) HandleConn(context.Context, stats.ConnStats) {}
