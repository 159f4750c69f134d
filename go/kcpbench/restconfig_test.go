package main

import (
	"testing"

	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
)

// A config changed after its client is built, made impossible: the clients
// are built from a config that already has the content type and no rate
// limiter.
func TestClientConfigIsSetBeforeTheClientIsBuilt(t *testing.T) {
	base := &rest.Config{Host: "https://127.0.0.1:1", QPS: 5, Burst: 10}
	for _, media := range allMediaTypes {
		cfg := clientConfig(base, media)
		if cfg.ContentType != media || cfg.AcceptContentTypes != media {
			t.Errorf("%s: ContentType %q, Accept %q", media, cfg.ContentType, cfg.AcceptContentTypes)
		}
		if cfg.QPS >= 0 || cfg.RateLimiter != nil {
			t.Errorf("%s: QPS %v, RateLimiter %v: a rate limiter would be built", media, cfg.QPS, cfg.RateLimiter)
		}
		cs, err := newClientset(base, media)
		if err != nil {
			t.Fatal(err)
		}
		for name, rc := range map[string]rest.Interface{"core/v1": cs.CoreV1().RESTClient(), "rbac/v1": cs.RbacV1().RESTClient()} {
			if rl := rc.GetRateLimiter(); rl != nil {
				t.Errorf("%s %s client has a rate limiter %T", media, name, rl)
			}
		}
	}
	if base.QPS != 5 || base.ContentType != "" {
		t.Errorf("clientConfig changed its argument: %+v", base)
	}
}

func TestClientCBORGates(t *testing.T) {
	enableClientCBOR()
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.ClientsAllowCBOR) {
		t.Error("ClientsAllowCBOR is off: client-go would send application/cbor requests as JSON")
	}
	if got, want := clientFeatureGates(), "ClientsAllowCBOR=true,ClientsPreferCBOR=false"; got != want {
		t.Errorf("clientFeatureGates() = %q, want %q", got, want)
	}
}
