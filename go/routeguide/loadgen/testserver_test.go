package main

import (
	"net"
	"testing"

	"google.golang.org/grpc"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	"github.com/grpcbench/grpcbench/go/routeguide/service"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// startTestServer serves the real RouteGuide service over db on a loopback
// port for the rest of the test, and returns its address.
func startTestServer(t *testing.T, db *features.DB, opts ...service.Option) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterRouteGuideServer(srv, service.New(db, opts...))
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// startBrokenServer serves answers that are well-formed but wrong for the
// load generator's inputs: a one-feature database in which the GetFeature
// point has another name, and a RouteChat store that keeps one note per
// location.
func startBrokenServer(t *testing.T) string {
	t.Helper()
	db, err := features.Parse([]byte(`[{"name": "Somewhere else",
		"location": {"latitude": 409146138, "longitude": -746188906}}]`))
	if err != nil {
		t.Fatal(err)
	}
	return startTestServer(t, db, service.WithNoteLimits(1, 1000))
}
