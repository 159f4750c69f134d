// Package echoservice implements the Echo service (proto/echo) that the
// channel tests and the tournament call. It does as little as the contract
// allows, so that what is measured is the channel carrying the messages.
package echoservice

import (
	"context"
	"errors"
	"io"

	pb "github.com/grpcbench/grpcbench/proto/echo"
)

// Server is the Echo service.
type Server struct {
	pb.UnimplementedEchoServer
}

// Echo returns the request's payload.
func (Server) Echo(_ context.Context, req *pb.EchoRequest) (*pb.EchoResponse, error) {
	return &pb.EchoResponse{Payload: req.GetPayload()}, nil
}

// ServerStream sends count responses of payload_size bytes. It sends the
// same response message each time: a server may, since the channel or the
// transport copies (or encodes) a message before Send returns.
func (Server) ServerStream(req *pb.StreamRequest, stream pb.Echo_ServerStreamServer) error {
	resp := &pb.EchoResponse{Payload: make([]byte, max(req.GetPayloadSize(), 0))}
	for range req.GetCount() {
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

// Bidi answers each request with its payload until the client closes its
// side.
func (Server) Bidi(stream pb.Echo_BidiServer) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&pb.EchoResponse{Payload: req.GetPayload()}); err != nil {
			return err
		}
	}
}
