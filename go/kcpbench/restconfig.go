package main

import (
	"sync"

	"k8s.io/client-go/kubernetes"
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
	// kubernetes.NewForConfig only make one for QPS > 0); 0 would mean
	// client-go's default of 5/s.
	cfg.QPS = -1
	cfg.Burst = 0
	cfg.RateLimiter = nil
	return cfg
}

// newClientset builds a typed clientset for one content type. Every client
// of the benchmark is made here, so the order above cannot be undone.
func newClientset(base *rest.Config, media string) (*kubernetes.Clientset, error) {
	enableClientCBOR()
	return kubernetes.NewForConfig(clientConfig(base, media))
}

var clientCBOROnce sync.Once

// enableClientCBOR turns on client-go's ClientsAllowCBOR gate for this
// process, once and before the first client is built (the generated
// clients pick their codecs when they are built, and without the gate a
// client rewrites application/cbor to application/json).
func enableClientCBOR() {
	clientCBOROnce.Do(installClientGates)
}
