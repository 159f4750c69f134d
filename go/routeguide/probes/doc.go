// Package probes tests what tools and orchestrators ask of the RouteGuide
// servers besides RouteGuide itself: the standard health service
// (grpc.health.v1.Health, which Kubernetes' gRPC probes call) and server
// reflection (grpc.reflection.v1 and v1alpha), driven by the real grpcurl
// command built from its Go module.
package probes
