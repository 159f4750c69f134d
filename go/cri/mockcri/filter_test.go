package mockcri

import (
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func ids(cs []*runtimeapi.Container) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Id
	}
	return out
}

func TestListContainersFilters(t *testing.T) {
	inv := MustGenerate(DefaultConfig(64))
	c := inv.Containers[5]
	exited := &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}
	count := func(pred func(*runtimeapi.Container) bool) int {
		n := 0
		for _, c := range inv.Containers {
			if pred(c) {
				n++
			}
		}
		return n
	}

	for _, tc := range []struct {
		name   string
		filter *runtimeapi.ContainerFilter
		want   int
	}{
		{"nil", nil, 64},
		{"empty", &runtimeapi.ContainerFilter{}, 64},
		{"id", &runtimeapi.ContainerFilter{Id: c.Id}, 1},
		{"id prefix", &runtimeapi.ContainerFilter{Id: c.Id[:12]}, 1},
		{"unknown id", &runtimeapi.ContainerFilter{Id: "ffff" + c.Id[4:]}, 0},
		{"id and other state", &runtimeapi.ContainerFilter{Id: c.Id, State: &runtimeapi.ContainerStateValue{State: 1 - c.State}}, 0},
		{"state", &runtimeapi.ContainerFilter{State: exited},
			count(func(c *runtimeapi.Container) bool { return c.State == exited.State })},
		{"pod", &runtimeapi.ContainerFilter{PodSandboxId: c.PodSandboxId}, 2},
		{"pod prefix", &runtimeapi.ContainerFilter{PodSandboxId: c.PodSandboxId[:13]}, 2},
		{"label", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{labelContainerName: c.Metadata.Name}},
			count(func(x *runtimeapi.Container) bool { return x.Metadata.Name == c.Metadata.Name })},
		{"labels and pod", &runtimeapi.ContainerFilter{PodSandboxId: c.PodSandboxId,
			LabelSelector: map[string]string{labelContainerName: c.Metadata.Name, labelPodUID: c.Labels[labelPodUID]}}, 1},
		{"label mismatch", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{labelPodUID: "nope"}}, 0},
	} {
		got := inv.ListContainers(tc.filter)
		if len(got) != tc.want {
			t.Errorf("%s: %d containers, want %d", tc.name, len(got), tc.want)
		}
		for i := 1; i < len(got); i++ {
			if inv.containerByID[got[i-1].Id] >= inv.containerByID[got[i].Id] {
				t.Errorf("%s: not in inventory order: %v", tc.name, ids(got))
			}
		}
	}
}

func TestAmbiguousPrefixMatchesNothing(t *testing.T) {
	inv := MustGenerate(DefaultConfig(64))
	// 64 random ids: some share a first hex digit.
	first := map[byte]int{}
	for _, c := range inv.Containers {
		first[c.Id[0]]++
	}
	for d, n := range first {
		if n > 1 {
			if got := inv.ListContainers(&runtimeapi.ContainerFilter{Id: string(d)}); len(got) != 0 {
				t.Errorf("ambiguous prefix %q matched %v", d, ids(got))
			}
			if _, ok := inv.container(string(d)); ok {
				t.Errorf("ambiguous prefix %q resolved", d)
			}
			return
		}
	}
	t.Fatal("no shared first digit among 64 ids")
}

func TestListPodSandboxesFilters(t *testing.T) {
	inv := MustGenerate(DefaultConfig(10))
	p := inv.Pods[2]
	for _, tc := range []struct {
		name   string
		filter *runtimeapi.PodSandboxFilter
		want   int
	}{
		{"nil", nil, 5},
		{"id prefix", &runtimeapi.PodSandboxFilter{Id: p.Id[:10]}, 1},
		{"ready", &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}, 5},
		{"not ready", &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY}}, 0},
		{"label", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{labelPodUID: p.Metadata.Uid}}, 1},
	} {
		if got := inv.ListPodSandboxes(tc.filter); len(got) != tc.want {
			t.Errorf("%s: %d pods, want %d", tc.name, len(got), tc.want)
		}
	}
}
