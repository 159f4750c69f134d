// Package mockcri is a mock container runtime: a gRPC server of the
// Kubernetes CRI (k8s.io/cri-api runtime.v1) that serves a fixed,
// generated set of pod sandboxes and containers, for benchmarking the
// kubelet-facing list RPCs without a real runtime.
//
// It answers what a benchmark client and a real CRI client (kubelet's
// remote runtime, crictl) need to list and inspect containers: Version,
// Status, ListContainers, StreamContainers (KEP-5825, one container per
// message), ContainerStatus, ListPodSandbox, StreamPodSandboxes and
// PodSandboxStatus; ImageFsInfo, ListImages and ImageStatus of the
// ImageService, which crictl checks; and grpcbench's own ChunkedRuntimeService
// (//proto/cri, per_chunk containers per message) and MockRuntimeDebug
// (the server's heap counters). Every other CRI RPC answers Unimplemented.
//
// The inventory is generated from a seed (Generate): the same Config gives
// the same containers, byte for byte, so runs and machines compare. Field
// contents imitate what kubelet and containerd put there (64-hex ids,
// digested image references, kubelet's io.kubernetes.* labels and
// annotations), which puts a container with kubelet's default labels and
// annotations at the 1.0 to 1.8 KB that KEP-5825 measured.
package mockcri
