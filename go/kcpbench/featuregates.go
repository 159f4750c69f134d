package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	clientfeatures "k8s.io/client-go/features"
)

// serverFeatureGates turns on CBOR in kcp's API server. kcp v0.28 emulates
// Kubernetes 1.32, where CBOR serving is alpha and off by default.
const serverFeatureGates = "CBORServingAndStorage=true"

// clientGateOverrides are the client-go gates this benchmark sets. Only
// ClientsAllowCBOR is needed: every client names its content type, so
// ClientsPreferCBOR (which changes the default for clients that do not) is
// left off, and recorded as such.
var clientGateOverrides = map[clientfeatures.Feature]bool{
	clientfeatures.ClientsAllowCBOR:  true,
	clientfeatures.ClientsPreferCBOR: false,
}

// clientFeatureGates describes the overrides for the results, e.g.
// "ClientsAllowCBOR=true,ClientsPreferCBOR=false".
func clientFeatureGates() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(clientGateOverrides)) {
		parts = append(parts, fmt.Sprintf("%s=%t", k, clientGateOverrides[k]))
	}
	return strings.Join(parts, ",")
}

// overrideGates answers for the overridden gates and defers to client-go's
// own gates (the KUBE_FEATURE_* environment variables) for the rest. Set in
// code rather than through the environment so that a test binary, or a
// KUBE_FEATURE_ClientsAllowCBOR=false left in a shell, cannot change what is
// measured.
type overrideGates struct {
	base      clientfeatures.Gates
	overrides map[clientfeatures.Feature]bool
}

func (g overrideGates) Enabled(key clientfeatures.Feature) bool {
	if v, ok := g.overrides[key]; ok {
		return v
	}
	return g.base.Enabled(key)
}

func installClientGates() {
	clientfeatures.ReplaceFeatureGates(overrideGates{base: clientfeatures.FeatureGates(), overrides: clientGateOverrides})
}
