package main

import (
	"context"
	"fmt"
	"net"

	grpchan "github.com/fullstorydev/grpchan/inprocgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/grpcbench/grpcbench/go/inprocgrpc"
	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/echoservice"
	"github.com/grpcbench/grpcbench/go/inprocgrpc/internal/share"
	pb "github.com/grpcbench/grpcbench/proto/echo"
)

// A competitor is one way to reach the Echo service.
type competitor struct {
	name  string
	start func() (pb.EchoClient, func(), error)
	// workload, if set, is the only workload the competitor enters.
	workload string
}

// enters reports whether the competitor runs workload w.
func (c competitor) enters(w *workload) bool { return c.workload == "" || c.workload == w.name }

// competitors in report order. grpchan comes first because the report's
// tournament layout relates every row to the first of its table: the ratio
// column then reads "ns/op vs grpchan", the channel to beat.
var competitors = []competitor{
	{"grpchan", startGrpchan, ""},
	{"ours", startOurs, ""},
	{"ours-detached", startOursDetached, ""},
	{"grpc-loopback", startLoopback, ""},
	// Both channels without copies, a contract of their callers and
	// handlers rather than a default: a pair of their own, on the message
	// sizes where copying is most of a call's cost.
	{"grpchan-shared", startGrpchanShared, "unary"},
	{"ours-shared", startOursShared, "unary"},
	{"ours-detached-shared", startOursDetachedShared, "unary"},
	// Ours copying with proto.Merge where the messages have generated copy
	// code, as grpchan does: what the generated code saves.
	{"ours-merge", startOursMerge, "unary"},
	// No channel at all: the handler called directly, with the two copies
	// every copying channel makes (the request for the handler, the
	// response for the caller). What a copying channel cannot go below.
	{"copy-floor", startCopyFloor, "unary"},
}

// copyFloor is the Echo client of copy-floor: it calls the handler on the
// caller's goroutine with a copy of the request and returns a copy of its
// response, by the same generated code ours uses.
type copyFloor struct{ pb.EchoClient }

func (copyFloor) Echo(ctx context.Context, req *pb.EchoRequest, _ ...grpc.CallOption) (*pb.EchoResponse, error) {
	resp, err := echoservice.Server{}.Echo(ctx, req.CloneVT())
	return resp.CloneVT(), err
}

func startCopyFloor() (pb.EchoClient, func(), error) { return copyFloor{}, func() {}, nil }

// startOurs is this repository's channel with its defaults: a unary
// handler runs on the caller's goroutine, so the caller cannot leave at
// its deadline before the handler returns.
func startOurs() (pb.EchoClient, func(), error) {
	ch := inprocgrpc.New()
	pb.RegisterEchoServer(ch, echoservice.Server{})
	return pb.NewEchoClient(ch), func() {}, nil
}

// startOursMerge is this repository's channel copying every message with
// proto.Merge (WithoutGeneratedClones), as grpchan does, though the Echo
// messages have generated copy code.
func startOursMerge() (pb.EchoClient, func(), error) {
	ch := inprocgrpc.New(inprocgrpc.WithoutGeneratedClones())
	pb.RegisterEchoServer(ch, echoservice.Server{})
	return pb.NewEchoClient(ch), func() {}, nil
}

// startOursDetached is this repository's channel like for like with
// grpchan: each unary handler runs on a goroutine of its own and the
// caller waits on it and on its context, free to leave at its deadline.
func startOursDetached() (pb.EchoClient, func(), error) {
	ch := inprocgrpc.New(inprocgrpc.WithDetachedUnary())
	pb.RegisterEchoServer(ch, echoservice.Server{})
	return pb.NewEchoClient(ch), func() {}, nil
}

// startOursShared is this repository's channel with
// WithSharedUnaryMessages: unary messages are handed over, not copied, on
// the promise that neither side changes them.
func startOursShared() (pb.EchoClient, func(), error) {
	ch := inprocgrpc.New(inprocgrpc.WithSharedUnaryMessages())
	pb.RegisterEchoServer(ch, echoservice.Server{})
	return pb.NewEchoClient(ch), func() {}, nil
}

// startOursDetachedShared is ours-shared like for like with
// grpchan-shared: each handler on a goroutine of its own.
func startOursDetachedShared() (pb.EchoClient, func(), error) {
	ch := inprocgrpc.New(inprocgrpc.WithSharedUnaryMessages(), inprocgrpc.WithDetachedUnary())
	pb.RegisterEchoServer(ch, echoservice.Server{})
	return pb.NewEchoClient(ch), func() {}, nil
}

// startGrpchanShared is grpchan's channel with a Cloner that hands messages
// over as ours-shared does, through the same function, so that the two are
// compared doing the same work.
func startGrpchanShared() (pb.EchoClient, func(), error) {
	ch := (&grpchan.Channel{}).WithCloner(grpchan.CopyFunc(shareMessage))
	pb.RegisterEchoServer(ch, echoservice.Server{})
	return pb.NewEchoClient(ch), func() {}, nil
}

// shareMessage is a grpchan copy function that shares instead of copying.
func shareMessage(out, in any) error {
	o, ok := out.(proto.Message)
	if !ok {
		return fmt.Errorf("cannot share into %T: not a proto.Message", out)
	}
	i, ok := in.(proto.Message)
	if !ok {
		return fmt.Errorf("cannot share %T: not a proto.Message", in)
	}
	share.Fields(o.ProtoReflect(), i.ProtoReflect())
	return nil
}

// startGrpchan is fullstorydev/grpchan's in-process channel, the usual
// choice, with its defaults.
func startGrpchan() (pb.EchoClient, func(), error) {
	ch := &grpchan.Channel{}
	pb.RegisterEchoServer(ch, echoservice.Server{})
	return pb.NewEchoClient(ch), func() {}, nil
}

// startLoopback is real gRPC: a grpc.Server on 127.0.0.1 and a client
// connected to it over TCP, what an in-process channel saves.
func startLoopback() (pb.EchoClient, func(), error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	srv := grpc.NewServer()
	pb.RegisterEchoServer(srv, echoservice.Server{})
	go srv.Serve(lis) //nolint:errcheck // returns when stopped
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		srv.Stop()
		return nil, nil, err
	}
	stop := func() {
		conn.Close()
		srv.Stop()
	}
	cli := pb.NewEchoClient(conn)
	// Connect now, so that no measured call pays for the handshake.
	if _, err := cli.Echo(context.Background(), &pb.EchoRequest{}); err != nil {
		stop()
		return nil, nil, fmt.Errorf("connecting to %v: %w", lis.Addr(), err)
	}
	return cli, stop, nil
}
