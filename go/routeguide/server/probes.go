package main

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// registerProbes adds what tools and orchestrators expect of a gRPC server
// besides its own service: grpc.health.v1.Health (the Kubernetes gRPC probe,
// grpc_health_probe) and server reflection, v1 and v1alpha (grpcurl, Postman).
// The returned health server reports SERVING, for the whole server ("") and
// for RouteGuide, from now on: the listener is already bound.
func registerProbes(srv *grpc.Server) *health.Server {
	h := health.NewServer()
	h.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	h.SetServingStatus(pb.RouteGuide_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, h)
	reflection.Register(srv)
	return h
}
