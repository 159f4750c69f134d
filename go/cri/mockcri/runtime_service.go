package mockcri

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Identity of the mock runtime, as Version reports it.
const (
	RuntimeName       = "mockcri"
	RuntimeVersion    = "0.1.0"
	RuntimeAPIVersion = "v1"
	// kubeAPIVersion is the version of the kubelet-runtime API itself,
	// which Version has always reported as "0.1.0".
	kubeAPIVersion = "0.1.0"
)

// runtimeService is the CRI RuntimeService over an inventory: the list and
// status RPCs a client needs, Unimplemented for the rest (the embedded
// server), since nothing is ever created, started or stopped.
type runtimeService struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	inv   *Inventory
	codec codec // the server's, for handlers that encode ahead
}

func (s *runtimeService) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{
		Version:           kubeAPIVersion,
		RuntimeName:       RuntimeName,
		RuntimeVersion:    RuntimeVersion,
		RuntimeApiVersion: RuntimeAPIVersion,
	}, nil
}

// Status reports a ready runtime and network, which is what kubelet and
// crictl check before anything else.
func (s *runtimeService) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return &runtimeapi.StatusResponse{
		Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
			{Type: runtimeapi.RuntimeReady, Status: true},
			{Type: runtimeapi.NetworkReady, Status: true},
		}},
		RuntimeHandlers: []*runtimeapi.RuntimeHandler{{Name: "", Features: &runtimeapi.RuntimeHandlerFeatures{}}},
		Features:        &runtimeapi.RuntimeFeatures{},
	}, nil
}

func (s *runtimeService) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{Containers: s.inv.ListContainers(req.GetFilter())}, nil
}

// StreamContainers sends one container per message, the finest split
// KEP-5825 allows.
func (s *runtimeService) StreamContainers(req *runtimeapi.StreamContainersRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamContainersResponse]) error {
	return sendBursts(stream, s.codec, s.inv.ListContainers(req.GetFilter()), 1, func(chunk []*runtimeapi.Container) any {
		return &runtimeapi.StreamContainersResponse{Containers: chunk}
	})
}

func (s *runtimeService) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	i, ok := s.inv.container(req.GetContainerId())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.GetContainerId())
	}
	resp := &runtimeapi.ContainerStatusResponse{Status: s.inv.containerStatus(i)}
	if req.GetVerbose() {
		resp.Info = s.inv.containerInfo(i)
	}
	return resp, nil
}

func (s *runtimeService) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{Items: s.inv.ListPodSandboxes(req.GetFilter())}, nil
}

// StreamPodSandboxes sends one pod sandbox per message, like
// StreamContainers.
func (s *runtimeService) StreamPodSandboxes(req *runtimeapi.StreamPodSandboxesRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxesResponse]) error {
	return sendChunks(s.inv.ListPodSandboxes(req.GetFilter()), 1, func(chunk []*runtimeapi.PodSandbox) error {
		return stream.Send(&runtimeapi.StreamPodSandboxesResponse{PodSandboxes: chunk})
	})
}

func (s *runtimeService) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	i, ok := s.inv.pod(req.GetPodSandboxId())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "pod sandbox %q not found", req.GetPodSandboxId())
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: s.inv.podStatus(i)}, nil
}
