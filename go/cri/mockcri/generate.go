package mockcri

import (
	"fmt"
	"strconv"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// epoch is when the generated node's first pod was created. A fixed
// instant, not time.Now: timestamps are part of the deterministic bytes.
var epoch = time.Date(2025, time.June, 2, 8, 0, 0, 0, time.UTC)

// exitedOneIn is the share of containers that have exited (1 in 8): a
// restarted container leaves its previous instance behind, and finished
// init and job containers stay listed until garbage-collected.
const exitedOneIn = 8

// Generate builds the inventory cfg describes. The same cfg always gives
// the same inventory: ids, names, states and timestamps come from cfg.Seed
// alone.
func Generate(cfg Config) (*Inventory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := newRandom(cfg.Seed)
	images := map[string]image{} // one digest per repository:tag, as on a node
	inv := &Inventory{
		containerByID: make(map[string]int, cfg.Containers),
		podByID:       map[string]int{},
	}
	for first := 0; first < cfg.Containers; first += cfg.ContainersPerPod {
		n := min(cfg.ContainersPerPod, cfg.Containers-first)
		p := newPod(g, len(inv.Pods))
		inv.podByID[p.sandbox.Id] = len(inv.Pods)
		inv.Pods = append(inv.Pods, p.sandbox)
		for k := range n {
			c, d := p.newContainer(g, images, k, cfg)
			inv.containerByID[c.Id] = len(inv.Containers)
			inv.Containers = append(inv.Containers, c)
			inv.details = append(inv.details, d)
		}
	}
	return inv, nil
}

// MustGenerate is Generate for configurations known to be valid, as in
// tests and examples.
func MustGenerate(cfg Config) *Inventory {
	inv, err := Generate(cfg)
	if err != nil {
		panic(err)
	}
	return inv
}

// pod is a sandbox being generated, with what its containers inherit.
type pod struct {
	sandbox      *runtimeapi.PodSandbox
	work         workload
	team         string
	templateHash string
	sidecarBase  int // the pod's first sidecar, in sidecars
}

func newPod(g *random, index int) *pod {
	work := workloads[g.intn(len(workloads))]
	namespace := namespaces[g.intn(len(namespaces))]
	hash := g.suffix(10)
	// A Deployment's pod: app-<replicaset hash>-<random suffix>.
	name := work.app + "-" + hash + "-" + g.suffix(5)
	uid := g.uuid()
	created := epoch.Add(time.Duration(index)*7*time.Second + time.Duration(g.intn(5000))*time.Millisecond)
	p := &pod{work: work, team: teams[g.intn(len(teams))], templateHash: hash, sidecarBase: g.intn(len(sidecars))}
	p.sandbox = &runtimeapi.PodSandbox{
		Id: g.hex(64),
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: name, Uid: uid, Namespace: namespace,
		},
		State:     runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: created.UnixNano(),
		Labels: map[string]string{
			labelPodName:             name,
			labelPodNamespace:        namespace,
			labelPodUID:              uid,
			"app.kubernetes.io/name": work.app,
			"pod-template-hash":      hash,
		},
		Annotations: map[string]string{
			annotationConfigSeen:   created.Add(-time.Second).Format(time.RFC3339Nano),
			annotationConfigSource: "api",
		},
	}
	return p
}

// image is a container's image as the runtime reports it.
type image struct {
	name string // what the pod spec says: host/repository:tag
	ref  string // the digested reference: host/repository@sha256:...
	id   string // the image id: sha256:...
}

// imageFor returns the image repository:tag, drawing its digests on first
// use.
func imageFor(g *random, images map[string]image, repository, tag string) image {
	name := imageHost + "/" + repository + ":" + tag
	img, ok := images[name]
	if !ok {
		img = image{
			name: name,
			ref:  imageHost + "/" + repository + "@sha256:" + g.hex(64),
			id:   "sha256:" + g.hex(64),
		}
		images[name] = img
	}
	return img
}

// newContainer generates the k-th container of p: the workload itself
// first, then sidecars.
func (p *pod) newContainer(g *random, images map[string]image, k int, cfg Config) (*runtimeapi.Container, containerDetails) {
	name, repository, tag, port := p.work.app, p.work.image, p.work.tag, p.work.port
	if k > 0 {
		if k-1 < len(sidecars) {
			s := sidecars[(p.sidecarBase+k-1)%len(sidecars)]
			name, repository, tag, port = s.name, s.image, s.tag, s.port
		} else {
			name = fmt.Sprintf("worker-%d", k)
		}
	}
	img := imageFor(g, images, repository, tag)
	attempt := uint32(0)
	if g.oneIn(4) {
		attempt = uint32(1 + g.intn(3))
	}
	state := runtimeapi.ContainerState_CONTAINER_RUNNING
	if g.oneIn(exitedOneIn) {
		state = runtimeapi.ContainerState_CONTAINER_EXITED
	}
	created := p.sandbox.CreatedAt + int64(500+g.intn(2500))*int64(time.Millisecond)
	d := containerDetails{
		startedAt: created + int64(50+g.intn(400))*int64(time.Millisecond),
		logPath: fmt.Sprintf("/var/log/pods/%s_%s_%s/%s/%d.log",
			p.sandbox.Metadata.Namespace, p.sandbox.Metadata.Name, p.sandbox.Metadata.Uid, name, attempt),
	}
	if state == runtimeapi.ContainerState_CONTAINER_EXITED {
		d.finishedAt = d.startedAt + int64(1+g.intn(3600))*int64(time.Second)
		d.exitCode, d.reason = 137, "OOMKilled"
		if g.oneIn(2) {
			d.exitCode, d.reason = 0, "Completed"
		}
	}

	c := &runtimeapi.Container{
		Id:           g.hex(64),
		PodSandboxId: p.sandbox.Id,
		Metadata:     &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image:        &runtimeapi.ImageSpec{Image: img.name, UserSpecifiedImage: img.name},
		ImageRef:     img.ref,
		ImageId:      img.id,
		State:        state,
		CreatedAt:    created,
	}
	c.Labels = p.labels(g, name, tag, cfg.Labels)
	c.Annotations = p.annotations(g, name, port, attempt, cfg.Annotations)
	return c, d
}

// labels returns n labels: kubelet's four, then the pod's own labels as
// charts set them, then numbered ones.
func (p *pod) labels(g *random, container, tag string, n int) map[string]string {
	meta := p.sandbox.Metadata
	candidates := [][2]string{
		{labelContainerName, container},
		{labelPodName, meta.Name},
		{labelPodNamespace, meta.Namespace},
		{labelPodUID, meta.Uid},
		{"app.kubernetes.io/name", p.work.app},
		{"app.kubernetes.io/instance", p.work.app + "-" + meta.Namespace},
		{"app.kubernetes.io/version", tag},
		{"app.kubernetes.io/managed-by", "Helm"},
		{"example.com/team", p.team},
		{"pod-template-hash", p.templateHash},
	}
	return fill(g, candidates, n, labelExtraTemplate, 12)
}

// annotations returns n annotations: kubelet's six, then common ecosystem
// annotations, then numbered ones.
func (p *pod) annotations(g *random, container string, port int, attempt uint32, n int) map[string]string {
	candidates := [][2]string{
		{annotationContainerHash, g.hex(8)},
		{annotationRestartCount, strconv.Itoa(int(attempt))},
		{annotationTerminationPath, "/dev/termination-log"},
		{annotationTerminationPolicy, "File"},
		{annotationTerminationGrace, "30"},
		{annotationContainerPorts, fmt.Sprintf(`[{"name":"http","containerPort":%d,"protocol":"TCP"}]`, port)},
	}
	if n > len(candidates) {
		candidates = append(candidates,
			[2]string{annotationDefaultContainer, p.work.app},
			[2]string{annotationPrometheusScrape, "true"},
			[2]string{annotationPrometheusPort, strconv.Itoa(port)},
			[2]string{annotationPrometheusPath, "/metrics"},
			[2]string{annotationSafeToEvict, "true"},
			[2]string{annotationConfigChecksum, g.hex(64)},
			[2]string{annotationSecretChecksum, g.hex(64)},
			[2]string{annotationRestartedAt, time.Unix(0, p.sandbox.CreatedAt).UTC().Add(-time.Hour).Format(time.RFC3339)},
			[2]string{annotationSeccompProfile, "runtime/default"},
			[2]string{annotationIstioStatus, `{"initContainers":["istio-init"],"containers":["istio-proxy"],` +
				`"volumes":["workload-socket","credential-socket","workload-certs","istio-envoy","istio-data",` +
				`"istio-podinfo","istio-token","istiod-ca-cert"],"imagePullSecrets":null,"revision":"default"}`},
		)
	}
	return fill(g, candidates, n, annotationExtraTemplate, 32)
}

// fill takes the first n candidates, then numbered keys (keyTemplate) with
// random hex values of valueLen digits.
func fill(g *random, candidates [][2]string, n int, keyTemplate string, valueLen int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		if i < len(candidates) {
			m[candidates[i][0]] = candidates[i][1]
			continue
		}
		m[fmt.Sprintf(keyTemplate, i)] = g.hex(valueLen)
	}
	return m
}
