package mockcri

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// receive drains a server stream, returning the containers of each message.
func receive[M any](t *testing.T, stream grpc.ServerStreamingClient[M], containers func(*M) []*runtimeapi.Container) [][]*runtimeapi.Container {
	t.Helper()
	var msgs [][]*runtimeapi.Container
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return msgs
		}
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, containers(m))
	}
}

func flatten(msgs [][]*runtimeapi.Container) []*runtimeapi.Container {
	var out []*runtimeapi.Container
	for _, m := range msgs {
		out = append(out, m...)
	}
	return out
}

// listAll lists with the filter through all three RPCs.
func listAll(t *testing.T, ctx context.Context, c clients, filter *runtimeapi.ContainerFilter, perChunk uint32) (list []*runtimeapi.Container, stream, chunked [][]*runtimeapi.Container) {
	t.Helper()
	resp, err := c.runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.runtime.StreamContainers(ctx, &runtimeapi.StreamContainersRequest{Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	stream = receive(t, s, (*runtimeapi.StreamContainersResponse).GetContainers)
	ch, err := c.chunked.ListContainersChunked(ctx, &cripb.ListContainersChunkedRequest{Filter: filter, PerChunk: perChunk})
	if err != nil {
		t.Fatal(err)
	}
	chunked = receive(t, ch, (*cripb.ListContainersChunkedResponse).GetContainers)
	return resp.Containers, stream, chunked
}

func sameContainers(t *testing.T, what string, got, want []*runtimeapi.Container) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d containers, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("%s: container %d is %s, want %s", what, i, got[i].Id, want[i].Id)
		}
	}
}

func chunkSizes(msgs [][]*runtimeapi.Container) []int {
	sizes := make([]int, len(msgs))
	for i, m := range msgs {
		sizes[i] = len(m)
	}
	return sizes
}

// The three RPCs return the same containers, in the same order, as the
// inventory holds them, over both transports, with grpc-go's defaults and
// with the benchmark's tuning (whose streaming handlers encode ahead) and
// codec.
func TestThreeRPCsAgree(t *testing.T) {
	tunings := map[string]Transport{
		"default": {},
		"tuned":   {Window: 1 << 20, Buffer: 64 << 10, Pool: PoolPow2},
		"criwire": {Pool: PoolPow2, Codec: CodecCRIWire},
	}
	for _, network := range []string{"unix", "tcp"} {
		for name, tune := range tunings {
			t.Run(network+"/"+name, func(t *testing.T) {
				testThreeRPCsAgree(t, network, tune)
			})
		}
	}
}

func testThreeRPCsAgree(t *testing.T, network string, tune Transport) {
	cfg := DefaultConfig(40) // not a multiple of the chunk size nor the burst
	cfg.Annotations = 32
	inv := MustGenerate(cfg)
	c := serveTuned(t, inv, network, tune)
	list, stream, chunked := listAll(t, testContext(t), c, nil, 16)
	sameContainers(t, "ListContainers", list, inv.Containers)
	sameContainers(t, "StreamContainers", flatten(stream), inv.Containers)
	sameContainers(t, "ListContainersChunked", flatten(chunked), inv.Containers)
	if len(stream) != 40 {
		t.Errorf("StreamContainers sent %d messages, want one per container", len(stream))
	}
	if got := chunkSizes(chunked); !equalInts(got, []int{16, 16, 8}) {
		t.Errorf("chunks %v, want [16 16 8]", got)
	}
}

func TestChunkBoundaries(t *testing.T) {
	for _, tc := range []struct {
		containers int
		perChunk   uint32
		want       []int
	}{
		{32, 16, []int{16, 16}},
		{1024, 256, []int{256, 256, 256, 256}},
		{40, 16, []int{16, 16, 8}},
		{3, 0, []int{3}}, // 0: the server's default, DefaultPerChunk
		{0, 16, []int{}},
	} {
		inv := MustGenerate(DefaultConfig(tc.containers))
		c := serve(t, inv, "unix")
		_, _, chunked := listAll(t, testContext(t), c, nil, tc.perChunk)
		if got := chunkSizes(chunked); !equalInts(got, tc.want) {
			t.Errorf("%d containers per %d: chunks %v, want %v", tc.containers, tc.perChunk, got, tc.want)
		}
		sameContainers(t, "chunked", flatten(chunked), inv.Containers)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Filters apply alike to all three RPCs.
func TestFiltersOverRPC(t *testing.T) {
	inv := MustGenerate(DefaultConfig(64))
	c := serve(t, inv, "unix")
	ctx := testContext(t)
	target := inv.Containers[9]
	for _, filter := range []*runtimeapi.ContainerFilter{
		{Id: target.Id[:8]},
		{PodSandboxId: target.PodSandboxId},
		{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}},
		{LabelSelector: map[string]string{labelPodNamespace: target.Labels[labelPodNamespace]}},
		{Id: "does-not-exist"},
	} {
		want := inv.ListContainers(filter)
		list, stream, chunked := listAll(t, ctx, c, filter, 4)
		sameContainers(t, "ListContainers "+filter.String(), list, want)
		sameContainers(t, "StreamContainers "+filter.String(), flatten(stream), want)
		sameContainers(t, "ListContainersChunked "+filter.String(), flatten(chunked), want)
	}
}

// What a real client (kubelet's remote runtime, crictl) calls first and to
// inspect, works; what a mock cannot do says Unimplemented.
func TestClientBasics(t *testing.T) {
	inv := MustGenerate(DefaultConfig(8))
	c := serve(t, inv, "unix")
	ctx := testContext(t)

	v, err := c.runtime.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil || v.RuntimeName != RuntimeName || v.RuntimeApiVersion != "v1" {
		t.Fatalf("Version: %v, %v", v, err)
	}
	st, err := c.runtime.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil || len(st.GetStatus().GetConditions()) != 2 || !st.Status.Conditions[0].Status {
		t.Fatalf("Status: %v, %v", st, err)
	}

	want := inv.Containers[3]
	cs, err := c.runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: want.Id[:10], Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := cs.Status; s.Id != want.Id || s.Metadata.Name != want.Metadata.Name || s.StartedAt <= s.CreatedAt || s.LogPath == "" || cs.Info["info"] == "" {
		t.Errorf("ContainerStatus: %v", cs)
	}
	_, err = c.runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "nope"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("ContainerStatus of an unknown id: %v, want NotFound", err)
	}

	pods, err := c.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil || len(pods.Items) != 4 {
		t.Fatalf("ListPodSandbox: %d pods, %v", len(pods.GetItems()), err)
	}
	ps, err := c.runtime.StreamPodSandboxes(ctx, &runtimeapi.StreamPodSandboxesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		m, err := ps.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(m.PodSandboxes) != 1 || !proto.Equal(m.PodSandboxes[0], pods.Items[n]) {
			t.Fatalf("StreamPodSandboxes message %d: %v", n, m)
		}
		n++
	}
	if n != 4 {
		t.Errorf("StreamPodSandboxes sent %d pods, want 4", n)
	}
	pst, err := c.runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: want.PodSandboxId})
	if err != nil || pst.Status.Id != want.PodSandboxId {
		t.Errorf("PodSandboxStatus: %v, %v", pst, err)
	}

	img, err := c.images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: want.ImageId}})
	if err != nil || img.Image.GetId() != want.ImageId {
		t.Errorf("ImageStatus: %v, %v", img, err)
	}

	_, err = c.runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("CreateContainer: %v, want Unimplemented", err)
	}
}

// MemStats counts the server's allocations: listing 256 containers
// allocates, so the counters grow.
func TestMemStatsGrow(t *testing.T) {
	inv := MustGenerate(DefaultConfig(256))
	c := serve(t, inv, "unix")
	ctx := testContext(t)
	before, err := c.debug.MemStats(ctx, &cripb.MemStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	listAll(t, ctx, c, nil, 16)
	after, err := c.debug.MemStats(ctx, &cripb.MemStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if after.TotalAllocBytes <= before.TotalAllocBytes || after.Mallocs <= before.Mallocs || after.Pid != before.Pid || after.Pid == 0 {
		t.Errorf("MemStats before %v, after %v", before, after)
	}
}

// MemStats with collect_garbage runs a collection before it reads: the
// count of completed cycles grows by at least one.
func TestMemStatsCollectsGarbage(t *testing.T) {
	c := serve(t, MustGenerate(DefaultConfig(16)), "unix")
	ctx := testContext(t)
	before, err := c.debug.MemStats(ctx, &cripb.MemStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := c.debug.MemStats(ctx, &cripb.MemStatsRequest{CollectGarbage: true})
	if err != nil {
		t.Fatal(err)
	}
	if after.NumGc <= before.NumGc {
		t.Errorf("num_gc %d after a collecting MemStats, %d before", after.NumGc, before.NumGc)
	}
}
