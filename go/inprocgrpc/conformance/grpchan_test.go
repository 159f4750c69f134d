package conformance_test

import (
	"testing"

	"github.com/fullstorydev/grpchan/grpchantesting"
	"google.golang.org/grpc/encoding"

	"github.com/grpcbench/grpcbench/go/inprocgrpc"
	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/leakcheck"
)

// TestGrpchanConformance runs grpchan's own channel test suite, the one its
// inprocgrpc passes, against this channel: unary, client-, server- and
// bidi-streaming (half and full duplex), each with success, failure with
// details, timeout and cancellation, headers, trailers and metadata.
func TestGrpchanConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []inprocgrpc.Option
	}{
		{"default", nil},
		{"codec", []inprocgrpc.Option{inprocgrpc.WithCodec(encoding.GetCodecV2("proto"))}},
		{"detached-unary", []inprocgrpc.Option{inprocgrpc.WithDetachedUnary()}},
		{"buffer-1", []inprocgrpc.Option{inprocgrpc.WithStreamBuffer(1)}},
		{"shared-unary", []inprocgrpc.Option{inprocgrpc.WithSharedUnaryMessages()}},
		{"shared-unary-detached", []inprocgrpc.Option{inprocgrpc.WithSharedUnaryMessages(), inprocgrpc.WithDetachedUnary()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			ch := inprocgrpc.New(tc.opts...)
			grpchantesting.RegisterTestServiceServer(ch, &grpchantesting.TestServer{})
			grpchantesting.RunChannelTestCases(t, ch, true)
		})
	}
}

// TestGrpchanConformanceZeroValue checks that a zero Channel works, as
// grpchan's does.
func TestGrpchanConformanceZeroValue(t *testing.T) {
	leakcheck.Check(t)
	var ch inprocgrpc.Channel
	grpchantesting.RegisterTestServiceServer(&ch, &grpchantesting.TestServer{})
	grpchantesting.RunChannelTestCases(t, &ch, true)
}
