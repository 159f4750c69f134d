package mockcri

import (
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Filtering follows containerd's CRI plugin: every set field of a filter
// must match (AND); ids match in full or by a unique prefix, since crictl
// passes abbreviated ids; label selectors are MatchLabels only.

// ListContainers returns the containers f selects, in inventory order. A
// nil or empty filter selects all, and returns inv.Containers itself: the
// caller must not modify the slice.
func (inv *Inventory) ListContainers(f *runtimeapi.ContainerFilter) []*runtimeapi.Container {
	if f == nil || (f.Id == "" && f.State == nil && f.PodSandboxId == "" && len(f.LabelSelector) == 0) {
		return inv.Containers
	}
	podID := ""
	if f.PodSandboxId != "" {
		i, ok := inv.pod(f.PodSandboxId)
		if !ok {
			return nil
		}
		podID = inv.Pods[i].Id
	}
	matches := func(c *runtimeapi.Container) bool {
		return (f.State == nil || c.State == f.State.State) &&
			(podID == "" || c.PodSandboxId == podID) &&
			labelsMatch(c.Labels, f.LabelSelector)
	}
	if f.Id != "" {
		i, ok := inv.container(f.Id)
		if !ok || !matches(inv.Containers[i]) {
			return nil
		}
		return inv.Containers[i : i+1]
	}
	var out []*runtimeapi.Container
	for _, c := range inv.Containers {
		if matches(c) {
			out = append(out, c)
		}
	}
	return out
}

// ListPodSandboxes returns the pod sandboxes f selects, in inventory order,
// with the same conventions as ListContainers.
func (inv *Inventory) ListPodSandboxes(f *runtimeapi.PodSandboxFilter) []*runtimeapi.PodSandbox {
	if f == nil || (f.Id == "" && f.State == nil && len(f.LabelSelector) == 0) {
		return inv.Pods
	}
	matches := func(p *runtimeapi.PodSandbox) bool {
		return (f.State == nil || p.State == f.State.State) && labelsMatch(p.Labels, f.LabelSelector)
	}
	if f.Id != "" {
		i, ok := inv.pod(f.Id)
		if !ok || !matches(inv.Pods[i]) {
			return nil
		}
		return inv.Pods[i : i+1]
	}
	var out []*runtimeapi.PodSandbox
	for _, p := range inv.Pods {
		if matches(p) {
			out = append(out, p)
		}
	}
	return out
}

// labelsMatch reports whether labels has every key of selector with the
// same value.
func labelsMatch(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
