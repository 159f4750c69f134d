package features_test

import (
	"context"
	"encoding/hex"
	"flag"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/go/handlercost/wire"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var lispFeaturePeer = flag.String("lisp_feature_peer", "", "rlocation of //lisp/featurepeer:peer")

// badRequest is the detail both directions carry.
var badRequest = &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
	{Field: "point.latitude", Description: "out of range: 91°"},
}}

func TestRichErrorFromGrpcGoReachesClgrpc(t *testing.T) {
	lis := listen(t)
	p := newPeer()
	srv := grpc.NewServer(grpc.ForceServerCodec(wire.Codec{}))
	desc := p.desc()
	desc.Methods[0].Handler = func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		var request []byte
		if err := dec(&request); err != nil {
			return nil, err
		}
		st, err := status.New(codes.InvalidArgument, "bad point").WithDetails(badRequest)
		if err != nil {
			return nil, err
		}
		return nil, st.Err()
	}
	srv.RegisterService(desc, nil)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)

	got := runGrpccall(t, lis.Addr().String(), "-method", flakyPath)
	if len(got) != 1 || got[0].Code != "INVALID_ARGUMENT" || got[0].Message != "bad point" || len(got[0].Details) != 1 {
		t.Fatalf("clgrpc's outcome: %+v, want INVALID_ARGUMENT with one detail", got)
	}
	d := got[0].Details[0]
	if d.TypeURL != "type.googleapis.com/google.rpc.BadRequest" {
		t.Errorf("detail type %q", d.TypeURL)
	}
	value, err := hex.DecodeString(d.Value)
	if err != nil {
		t.Fatal(err)
	}
	var decoded errdetails.BadRequest
	if err := proto.Unmarshal(value, &decoded); err != nil || !proto.Equal(&decoded, badRequest) {
		t.Errorf("the detail clgrpc received decodes to %v (%v), want %v", &decoded, err, badRequest)
	}
}

func TestRichErrorFromClgrpcReachesGrpcGo(t *testing.T) {
	if *lispFeaturePeer == "" {
		t.Fatal("-lisp_feature_peer is required")
	}
	server := serverproc.StartForTest(t, "lisp feature peer",
		[]string{runfile.Path(*lispFeaturePeer), "-addr", "127.0.0.1:0"}, 30*time.Second, 10*time.Second)
	conn, err := grpc.NewClient(server.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(wire.Codec{})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	any, err := anypb.New(badRequest)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "fail-code", "3", "fail-detail-type", any.GetTypeUrl(),
		"fail-detail-bin", string(any.GetValue()))
	var response []byte
	err = conn.Invoke(ctx, flakyPath, []byte{1}, &response)
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("grpc-go got %v, want INVALID_ARGUMENT", err)
	}
	details := st.Details()
	if len(details) != 1 {
		t.Fatalf("grpc-go's status.Details: %v, want the one detail", details)
	}
	if got, ok := details[0].(*errdetails.BadRequest); !ok || !proto.Equal(got, badRequest) {
		t.Errorf("grpc-go decoded the detail as %#v, want %v", details[0], badRequest)
	}
}
