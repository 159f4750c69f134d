package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestBadFlagsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-content_types=json,xml", "-kcp=/bin/true"},
		{"-content_types=json,json", "-kcp=/bin/true"},
		{"-objects=pods", "-kcp=/bin/true"},
		{"-n=0", "-kcp=/bin/true"},
		{"-clients=0", "-kcp=/bin/true"},
		{},                                        // the client benchmark needs -kcp
		{"-client=false", "-serialization=false"}, // nothing to run
		{"-client=false", "-ser_benchtime=soon"},
		{"-kcp=/bin/true", "extra"},
	} {
		var out bytes.Buffer
		if _, err := parseOptions(args, &out); err == nil {
			t.Errorf("%q: accepted", args)
		} else if !strings.Contains(out.String(), "Usage") {
			t.Errorf("%q: no usage message: %q", args, out.String())
		}
	}
}

func TestFlagsDefaultsAndShortNames(t *testing.T) {
	o, err := parseOptions([]string{"-kcp=/bin/true", "-content_types=cbor,application/json", "-objects=rbac"}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.Media, ","); got != mediaCBOR+","+mediaJSON {
		t.Errorf("media = %s", got)
	}
	if len(o.Kinds) != 1 || o.Kinds[0].Benchmark != "WithClientRBAC" {
		t.Errorf("kinds = %+v", o.Kinds)
	}
	if !o.Client || !o.Serial || o.Ops != 200 || o.KCPGates != serverFeatureGates {
		t.Errorf("defaults: %+v", o)
	}
}
