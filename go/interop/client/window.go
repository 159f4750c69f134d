package main

import (
	"context"
	"io"
	"log"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// Not one of gRPC's interop cases: the large-message cases again at sizes
// past the 1 MiB stream window that both servers advertise, and after
// smaller messages that used part of it, in every kind of call. Flow
// control must return window as the application reads, or these hang.

// windowSizes: ten messages that use a fifth of the window, then one that
// needs more than is left, then one twice the window.
var windowSizes = []int{20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 900000, 2 << 20}

func doMessagesBeyondTheWindow(ctx context.Context, tc testgrpc.TestServiceClient, _ ...grpc.CallOption) {
	// Unary, both ways past the window.
	r, err := tc.UnaryCall(ctx, &testpb.SimpleRequest{ResponseType: testpb.PayloadType_COMPRESSABLE,
		ResponseSize: 2 << 20, Payload: zeros(2 << 20)})
	if err != nil {
		log.Fatalf("UnaryCall of 2 MiB each way: %v", err)
	}
	checkBody("unary response", r.GetPayload(), 2<<20)

	// Client streaming.
	in, err := tc.StreamingInputCall(ctx)
	if err != nil {
		log.Fatalf("StreamingInputCall: %v", err)
	}
	total := 0
	for _, n := range windowSizes {
		total += n
		if err := in.Send(&testpb.StreamingInputCallRequest{Payload: zeros(n)}); err != nil {
			log.Fatalf("StreamingInputCall, sending %d octets: %v", n, err)
		}
	}
	if sum, err := in.CloseAndRecv(); err != nil || int(sum.GetAggregatedPayloadSize()) != total {
		log.Fatalf("StreamingInputCall: %v, aggregated %d octets, want %d", err, sum.GetAggregatedPayloadSize(), total)
	}

	// Server streaming.
	var params []*testpb.ResponseParameters
	for _, n := range windowSizes {
		params = append(params, &testpb.ResponseParameters{Size: int32(n)})
	}
	out, err := tc.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{ResponseType: testpb.PayloadType_COMPRESSABLE, ResponseParameters: params})
	if err != nil {
		log.Fatalf("StreamingOutputCall: %v", err)
	}
	for i, n := range windowSizes {
		m, err := out.Recv()
		if err != nil {
			log.Fatalf("StreamingOutputCall, response %d: %v", i, err)
		}
		checkBody("server-streaming response", m.GetPayload(), n)
	}
	if _, err := out.Recv(); err != io.EOF {
		log.Fatalf("StreamingOutputCall: after the last response: %v", err)
	}

	// Bidi: each message echoed before the next.
	duplex, err := tc.FullDuplexCall(ctx)
	if err != nil {
		log.Fatalf("FullDuplexCall: %v", err)
	}
	for i, n := range windowSizes {
		if err := duplex.Send(&testpb.StreamingOutputCallRequest{ResponseType: testpb.PayloadType_COMPRESSABLE,
			ResponseParameters: []*testpb.ResponseParameters{{Size: int32(n)}}, Payload: zeros(n)}); err != nil {
			log.Fatalf("FullDuplexCall, message %d: %v", i, err)
		}
		m, err := duplex.Recv()
		if err != nil {
			log.Fatalf("FullDuplexCall, echo %d: %v", i, err)
		}
		checkBody("bidi echo", m.GetPayload(), n)
	}
	duplex.CloseSend()
	if _, err := duplex.Recv(); err != io.EOF {
		log.Fatalf("FullDuplexCall: after the last echo: %v", err)
	}
}
