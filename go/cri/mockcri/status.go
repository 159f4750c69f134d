package mockcri

import (
	"encoding/json"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// containerStatus builds the status of container i. It is built per call,
// unlike the shared list entries: status RPCs are not what is benchmarked,
// and building keeps the inventory small.
func (inv *Inventory) containerStatus(i int) *runtimeapi.ContainerStatus {
	c, d := inv.Containers[i], inv.details[i]
	return &runtimeapi.ContainerStatus{
		Id:          c.Id,
		Metadata:    c.Metadata,
		State:       c.State,
		CreatedAt:   c.CreatedAt,
		StartedAt:   d.startedAt,
		FinishedAt:  d.finishedAt,
		ExitCode:    d.exitCode,
		Reason:      d.reason,
		Image:       c.Image,
		ImageRef:    c.ImageRef,
		ImageId:     c.ImageId,
		Labels:      c.Labels,
		Annotations: c.Annotations,
		LogPath:     d.logPath,
	}
}

// containerInfo is the verbose part of ContainerStatus: runtime-specific
// JSON under "info", which crictl inspect prints.
func (inv *Inventory) containerInfo(i int) map[string]string {
	c := inv.Containers[i]
	pid := 0
	if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
		pid = 10000 + i // a plausible, stable pid
	}
	info, _ := json.Marshal(map[string]any{
		"sandboxID":   c.PodSandboxId,
		"pid":         pid,
		"runtimeType": "io.containerd.runc.v2",
		"mock":        RuntimeName,
	})
	return map[string]string{"info": string(info)}
}

// podStatus builds the status of pod sandbox i.
func (inv *Inventory) podStatus(i int) *runtimeapi.PodSandboxStatus {
	p := inv.Pods[i]
	return &runtimeapi.PodSandboxStatus{
		Id:          p.Id,
		Metadata:    p.Metadata,
		State:       p.State,
		CreatedAt:   p.CreatedAt,
		Labels:      p.Labels,
		Annotations: p.Annotations,
		Network:     &runtimeapi.PodSandboxNetworkStatus{Ip: podIP(i)},
		Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
			Options: &runtimeapi.NamespaceOption{},
		}},
	}
}

// podIP gives pod i an address in the 10.244.0.0/16 pod network that
// flannel and kindnet use by default. Nothing is ever sent to it.
func podIP(i int) string {
	return fmt.Sprintf("10.244.%d.%d", i/250%256, 2+i%250)
}
