package main

import (
	"sync"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/rest"
)

// clientConfig is base set up for one content type: request Content-Type,
// Accept, and no client-side rate limiter. It is a copy, made BEFORE any
// client exists, because a client reads its config once, when it is built:
// changed on the config after building the client, these fields do nothing,
// and every content type runs as JSON behind client-go's default limiter of
// 5 requests/s (3 requests per op, about 550 ms/op: docs/prior-results.md).
func clientConfig(base *rest.Config, media string) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.ContentType = media
	cfg.AcceptContentTypes = media
	// A negative QPS means no rate limiter at all (rest.RESTClientFor and
	// the typed clients only make one for QPS > 0); 0 would mean
	// client-go's default of 5/s.
	cfg.QPS = -1
	cfg.Burst = 0
	cfg.RateLimiter = nil
	return cfg
}

// clientset holds client-go's typed clients of the two API groups the
// benchmark uses, core/v1 and rbac/v1, over one HTTP client, as
// kubernetes.NewForConfig builds them for its clientset. Only these two are
// linked: that clientset would link the typed clients of every API group.
type clientset struct {
	core corev1client.CoreV1Interface
	rbac rbacv1client.RbacV1Interface
}

func (c *clientset) CoreV1() corev1client.CoreV1Interface { return c.core }
func (c *clientset) RbacV1() rbacv1client.RbacV1Interface { return c.rbac }

// newClientset builds the typed clients for one content type. Every client
// of the benchmark is made here, so the order above cannot be undone.
func newClientset(base *rest.Config, media string) (*clientset, error) {
	enableClientCBOR()
	cfg := clientConfig(base, media)
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	core, err := corev1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	rbac, err := rbacv1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &clientset{core: core, rbac: rbac}, nil
}

var clientCBOROnce sync.Once

// enableClientCBOR turns on client-go's ClientsAllowCBOR gate for this
// process, once and before the first client is built (the generated
// clients pick their codecs when they are built, and without the gate a
// client rewrites application/cbor to application/json).
func enableClientCBOR() {
	clientCBOROnce.Do(installClientGates)
}
