package mockcri

import (
	"strings"
	"sync"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Inventory is what the mock runtime holds: pod sandboxes and their
// containers, in creation order, which is the order every list RPC
// answers in. It is immutable once generated, so the servers share it
// across concurrent RPCs without locking; handlers must not modify the
// messages it holds.
type Inventory struct {
	Pods       []*runtimeapi.PodSandbox
	Containers []*runtimeapi.Container

	// details completes Containers[i] for ContainerStatus.
	details []containerDetails
	// containerByID and podByID index Containers and Pods by their full ids.
	containerByID map[string]int
	podByID       map[string]int

	// imageList is the distinct images, built on first use (images).
	imagesOnce sync.Once
	imageList  []*runtimeapi.Image
}

// containerDetails is what ContainerStatus reports beyond Container.
type containerDetails struct {
	startedAt, finishedAt int64
	exitCode              int32
	reason                string
	logPath               string
}

// container returns the index of the container with the given id or unique
// id prefix, as containerd and CRI-O resolve the ids crictl abbreviates.
func (inv *Inventory) container(idOrPrefix string) (int, bool) {
	if i, ok := inv.containerByID[idOrPrefix]; ok {
		return i, true
	}
	return uniquePrefix(len(inv.Containers), idOrPrefix, func(i int) string { return inv.Containers[i].Id })
}

// pod is container for pod sandboxes.
func (inv *Inventory) pod(idOrPrefix string) (int, bool) {
	if i, ok := inv.podByID[idOrPrefix]; ok {
		return i, true
	}
	return uniquePrefix(len(inv.Pods), idOrPrefix, func(i int) string { return inv.Pods[i].Id })
}

// uniquePrefix returns the only i < n whose id(i) starts with prefix. An
// empty or ambiguous prefix matches nothing.
func uniquePrefix(n int, prefix string, id func(int) string) (int, bool) {
	if prefix == "" {
		return 0, false
	}
	found := -1
	for i := range n {
		if strings.HasPrefix(id(i), prefix) {
			if found >= 0 {
				return 0, false
			}
			found = i
		}
	}
	return found, found >= 0
}
