package mockcri

// The vocabulary of the generated inventory: what a busy node's
// `crictl ps` shows. Image references use a documentation domain on
// purpose: their length is realistic, their host is nobody's.

// workload is an application a pod runs: its main container and image.
type workload struct {
	app, image, tag string
	port            int
}

var workloads = []workload{
	{"nginx", "library/nginx", "1.27.3-alpine", 8080},
	{"coredns", "coredns/coredns", "v1.11.3", 53},
	{"kube-proxy", "kubernetes/kube-proxy", "v1.33.2", 10256},
	{"redis", "library/redis", "7.4.1-bookworm", 6379},
	{"postgres", "library/postgres", "16.6-bookworm", 5432},
	{"frontend", "shop/frontend", "2025.06.1", 8080},
	{"checkout-service", "shop/checkout-service", "2025.06.1", 9555},
	{"payment-gateway", "shop/payment-gateway", "3.14.0", 8443},
	{"metrics-server", "kubernetes/metrics-server", "v0.7.2", 10250},
	{"prometheus", "prometheus/prometheus", "v3.1.0", 9090},
	{"fluent-bit", "fluent/fluent-bit", "3.2.4", 2020},
	{"cert-manager-controller", "jetstack/cert-manager-controller", "v1.16.2", 9402},
	{"ingress-nginx-controller", "ingress-nginx/controller", "v1.12.0", 10254},
	{"api-gateway", "platform/api-gateway", "1.8.12", 8000},
	{"search-indexer", "search/indexer", "0.42.7", 7070},
}

// sidecar is a helper container added to a pod after the main one.
type sidecar struct {
	name, image, tag string
	port             int
}

var sidecars = []sidecar{
	{"istio-proxy", "istio/proxyv2", "1.24.2", 15090},
	{"linkerd-proxy", "linkerd/proxy", "stable-2.14.10", 4191},
	{"log-shipper", "fluent/fluent-bit", "3.2.4", 2020},
	{"config-reloader", "prometheus-operator/prometheus-config-reloader", "v0.79.2", 8080},
	{"metrics-exporter", "prometheus/node-exporter", "v1.8.2", 9100},
	{"cloud-sql-proxy", "cloudsql/cloud-sql-proxy", "2.14.2", 9801},
}

var namespaces = []string{
	"default", "kube-system", "monitoring", "ingress-nginx", "cert-manager",
	"shop-production", "shop-staging", "search", "platform-gateway", "logging",
}

var teams = []string{"payments", "storefront", "platform", "observability", "search", "identity"}

// imageHost is where every generated image lives.
const imageHost = "images.example.com"

// Kubelet's label and annotation keys (pkg/kubelet/types/labels.go,
// pkg/kubelet/kuberuntime/labels.go).
const (
	labelContainerName = "io.kubernetes.container.name"
	labelPodName       = "io.kubernetes.pod.name"
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodUID        = "io.kubernetes.pod.uid"

	annotationContainerHash     = "io.kubernetes.container.hash"
	annotationRestartCount      = "io.kubernetes.container.restartCount"
	annotationTerminationPath   = "io.kubernetes.container.terminationMessagePath"
	annotationTerminationPolicy = "io.kubernetes.container.terminationMessagePolicy"
	annotationTerminationGrace  = "io.kubernetes.pod.terminationGracePeriod"
	annotationContainerPorts    = "io.kubernetes.container.ports"
	annotationConfigSeen        = "kubernetes.io/config.seen"
	annotationConfigSource      = "kubernetes.io/config.source"
	annotationDefaultContainer  = "kubectl.kubernetes.io/default-container"
	annotationPrometheusScrape  = "prometheus.io/scrape"
	annotationPrometheusPort    = "prometheus.io/port"
	annotationPrometheusPath    = "prometheus.io/path"
	annotationSafeToEvict       = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	annotationConfigChecksum    = "checksum/config"
	annotationSecretChecksum    = "checksum/secret"
	annotationIstioStatus       = "sidecar.istio.io/status"
	annotationRestartedAt       = "kubectl.kubernetes.io/restartedAt"
	annotationSeccompProfile    = "seccomp.security.alpha.kubernetes.io/pod"
	annotationExtraTemplate     = "example.com/annotation-%02d"
	labelExtraTemplate          = "example.com/label-%02d"
)
