package mockcri

import (
	"errors"
	"fmt"
)

// Defaults of Config: what kubelet itself sets on a container.
const (
	// DefaultLabels is kubelet's container labels: container name, pod
	// name, pod namespace and pod UID.
	DefaultLabels = 4
	// DefaultAnnotations is kubelet's usual container annotations: hash,
	// restart count, termination message path and policy, termination
	// grace period, ports.
	DefaultAnnotations = 6
	// DefaultContainersPerPod is an application container and one sidecar.
	DefaultContainersPerPod = 2
	// DefaultSeed is the seed of the generated inventory unless told
	// otherwise; any fixed value gives reproducible runs.
	DefaultSeed = 1
)

// MaxContainers bounds the inventory: far beyond any node (kubelet's
// default is 110 pods), and small enough to generate in well under a
// second.
const MaxContainers = 1 << 20

// Config describes the inventory a server serves.
type Config struct {
	// Containers is the number of containers, all states together.
	Containers int
	// Labels and Annotations are the number of labels and annotations on
	// each container. The first ones are kubelet's own (DefaultLabels,
	// DefaultAnnotations), then common ecosystem keys, then numbered ones.
	Labels, Annotations int
	// ContainersPerPod groups containers into pod sandboxes; the last pod
	// may hold fewer.
	ContainersPerPod int
	// Seed selects the generated names, ids and states.
	Seed uint64
}

// DefaultConfig is a node with n containers as kubelet creates them.
func DefaultConfig(n int) Config {
	return Config{
		Containers:       n,
		Labels:           DefaultLabels,
		Annotations:      DefaultAnnotations,
		ContainersPerPod: DefaultContainersPerPod,
		Seed:             DefaultSeed,
	}
}

// Validate reports a configuration Generate cannot honor.
func (c Config) Validate() error {
	var errs []error
	if c.Containers < 0 || c.Containers > MaxContainers {
		errs = append(errs, fmt.Errorf("containers must be between 0 and %d, got %d", MaxContainers, c.Containers))
	}
	if c.Labels < 0 || c.Labels > maxMapEntries {
		errs = append(errs, fmt.Errorf("labels must be between 0 and %d, got %d", maxMapEntries, c.Labels))
	}
	if c.Annotations < 0 || c.Annotations > maxMapEntries {
		errs = append(errs, fmt.Errorf("annotations must be between 0 and %d, got %d", maxMapEntries, c.Annotations))
	}
	if c.ContainersPerPod < 1 {
		errs = append(errs, fmt.Errorf("containers per pod must be at least 1, got %d", c.ContainersPerPod))
	}
	return errors.Join(errs...)
}

// maxMapEntries bounds labels and annotations per container. Kubernetes
// limits all annotations of an object to 256 KiB, which at realistic sizes
// is a few thousand; beyond that a "container" is no longer realistic.
const maxMapEntries = 4096
