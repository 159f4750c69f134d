package mockcri

import (
	"bytes"
	"regexp"
	"testing"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// marshalAll serializes an inventory deterministically (map entries sorted),
// the form in which "the same containers" means the same bytes.
func marshalAll(t *testing.T, inv *Inventory) []byte {
	t.Helper()
	opts := proto.MarshalOptions{Deterministic: true}
	list, err := opts.Marshal(&runtimeapi.ListContainersResponse{Containers: inv.Containers})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := opts.Marshal(&runtimeapi.ListPodSandboxResponse{Items: inv.Pods})
	if err != nil {
		t.Fatal(err)
	}
	return append(list, pods...)
}

func TestGenerateIsDeterministic(t *testing.T) {
	cfg := DefaultConfig(300)
	cfg.Annotations = 32
	a, b := marshalAll(t, MustGenerate(cfg)), marshalAll(t, MustGenerate(cfg))
	if !bytes.Equal(a, b) {
		t.Fatal("two inventories from the same config differ")
	}
	cfg.Seed++
	if c := marshalAll(t, MustGenerate(cfg)); bytes.Equal(a, c) {
		t.Fatal("a different seed gave the same inventory")
	}
}

// A longer inventory extends a shorter one of the same seed: the 32 and
// 1024 container scenarios share their first 32 containers.
func TestGenerateIsPrefixStable(t *testing.T) {
	small, large := MustGenerate(DefaultConfig(32)), MustGenerate(DefaultConfig(1024))
	for i, c := range small.Containers {
		if !proto.Equal(c, large.Containers[i]) {
			t.Fatalf("container %d differs between 32 and 1024 containers", i)
		}
	}
}

func TestGenerateHonorsCounts(t *testing.T) {
	cfg := Config{Containers: 7, Labels: 12, Annotations: 40, ContainersPerPod: 3, Seed: 9}
	inv := MustGenerate(cfg)
	if len(inv.Containers) != 7 || len(inv.Pods) != 3 {
		t.Fatalf("got %d containers in %d pods, want 7 in 3", len(inv.Containers), len(inv.Pods))
	}
	perPod := map[string]int{}
	for _, c := range inv.Containers {
		if len(c.Labels) != 12 || len(c.Annotations) != 40 {
			t.Errorf("container %s: %d labels, %d annotations; want 12, 40", c.Id, len(c.Labels), len(c.Annotations))
		}
		perPod[c.PodSandboxId]++
	}
	for i, p := range inv.Pods {
		want := 3
		if i == 2 {
			want = 1
		}
		if perPod[p.Id] != want {
			t.Errorf("pod %d has %d containers, want %d", i, perPod[p.Id], want)
		}
	}
	if inv := MustGenerate(Config{ContainersPerPod: 1}); len(inv.Containers) != 0 || len(inv.Pods) != 0 {
		t.Errorf("empty config: %d containers, %d pods", len(inv.Containers), len(inv.Pods))
	}
}

var (
	hex64     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	digestRef = regexp.MustCompile(`^[a-z0-9.-]+/[a-z0-9/-]+@sha256:[0-9a-f]{64}$`)
	imageID   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// The fields look like what containerd reports, so that sizes are
// realistic and real clients render them.
func TestGenerateLooksLikeARuntime(t *testing.T) {
	inv := MustGenerate(DefaultConfig(200))
	ids := map[string]bool{}
	for _, c := range inv.Containers {
		if !hex64.MatchString(c.Id) || !hex64.MatchString(c.PodSandboxId) {
			t.Fatalf("ids %q / %q are not 64 hex digits", c.Id, c.PodSandboxId)
		}
		if ids[c.Id] {
			t.Fatalf("duplicate container id %s", c.Id)
		}
		ids[c.Id] = true
		if !digestRef.MatchString(c.ImageRef) || !imageID.MatchString(c.ImageId) {
			t.Fatalf("image ref %q / id %q are not digested references", c.ImageRef, c.ImageId)
		}
		if c.Labels[labelContainerName] != c.Metadata.Name || c.Labels[labelPodUID] == "" {
			t.Fatalf("kubelet labels missing: %v", c.Labels)
		}
		if c.Annotations[annotationTerminationPath] != "/dev/termination-log" {
			t.Fatalf("kubelet annotations missing: %v", c.Annotations)
		}
		if c.CreatedAt <= 0 {
			t.Fatalf("created_at %d", c.CreatedAt)
		}
	}
	states := map[runtimeapi.ContainerState]int{}
	for _, c := range inv.Containers {
		states[c.State]++
	}
	if states[runtimeapi.ContainerState_CONTAINER_RUNNING] == 0 || states[runtimeapi.ContainerState_CONTAINER_EXITED] == 0 {
		t.Errorf("want running and exited containers, got %v", states)
	}
}

// KEP-5825 measured 1.0 to 1.8 KB per serialized Container with kubelet's
// labels and annotations; the defaults must land there.
func TestDefaultContainerSize(t *testing.T) {
	inv := MustGenerate(DefaultConfig(500))
	total := 0
	for _, c := range inv.Containers {
		n := proto.Size(c)
		if n < 900 || n > 2000 {
			t.Errorf("container %s serializes to %d bytes", c.Id, n)
		}
		total += n
	}
	avg := total / len(inv.Containers)
	t.Logf("average serialized container: %d bytes", avg)
	if avg < 1000 || avg > 1800 {
		t.Errorf("average container size %d bytes, want 1000..1800", avg)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []Config{
		{Containers: -1, ContainersPerPod: 1},
		{Containers: MaxContainers + 1, ContainersPerPod: 1},
		{Labels: -1, ContainersPerPod: 1},
		{Annotations: maxMapEntries + 1, ContainersPerPod: 1},
		{ContainersPerPod: 0},
	} {
		if _, err := Generate(cfg); err == nil {
			t.Errorf("Generate(%+v) succeeded", cfg)
		}
	}
}
