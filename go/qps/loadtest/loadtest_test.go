package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/grpcbench/grpcbench/go/qps/driver"
)

var images = []string{"-go_image=grpcbench/qps-worker-go:1", "-lisp_image=grpcbench/qps-worker-lisp:1"}

func renderArgs(t *testing.T, args ...string) []LoadTest {
	t.Helper()
	cfg, err := parseFlags(append(append([]string{}, images...), args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	out, err := render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := render(cfg)
	if !bytes.Equal(out, again) {
		t.Error("two renders of the same flags differ")
	}
	var lts []LoadTest
	for _, doc := range bytes.Split(out, []byte("---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var lt LoadTest
		if err := yaml.UnmarshalStrict(doc, &lt); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		lts = append(lts, lt)
	}
	return lts
}

// One LoadTest per scenario, payload and pairing, named uniquely, each
// running our worker images with the driver port the controller sets, and
// gRPC's driver.
func TestEveryCellIsALoadTest(t *testing.T) {
	lts := renderArgs(t)
	if len(lts) != 4*2*4 {
		t.Fatalf("%d LoadTests, want 32", len(lts))
	}
	names := map[string]bool{}
	for _, lt := range lts {
		if names[lt.Metadata.Name] || len(lt.Metadata.Name) > 253 || strings.ContainsAny(lt.Metadata.Name, "_/ ") {
			t.Errorf("bad or repeated name %q", lt.Metadata.Name)
		}
		names[lt.Metadata.Name] = true
		if lt.APIVersion != "e2etest.grpc.io/v1" || lt.Kind != "LoadTest" || lt.Spec.TimeoutSeconds != 900 || lt.Spec.TTLSeconds != 86400 {
			t.Errorf("%s: %s %s timeout %d ttl %d", lt.Metadata.Name, lt.APIVersion, lt.Kind, lt.Spec.TimeoutSeconds, lt.Spec.TTLSeconds)
		}
		if d := lt.Spec.Driver; d == nil || d.Language != "cxx" || len(d.Run) != 0 {
			t.Errorf("%s: driver %+v; want gRPC's C++ driver, the controller's default image", lt.Metadata.Name, d)
		}
		for _, c := range append(lt.Spec.Servers, lt.Spec.Clients...) {
			want := "grpcbench/qps-worker-" + c.Language + ":1"
			if len(c.Run) != 1 || c.Run[0].Name != "main" || c.Run[0].Image != want || !strings.Contains(strings.Join(c.Run[0].Args, " "), "$(DRIVER_PORT)") {
				t.Errorf("%s: %s component %+v", lt.Metadata.Name, c.Language, c.Run)
			}
		}
		if !strings.Contains(lt.Spec.ScenariosJSON, `"benchmark_seconds":30`) || !strings.Contains(lt.Spec.ScenariosJSON, `"warmup_seconds":5`) {
			t.Errorf("%s: scenarios %s", lt.Metadata.Name, lt.Spec.ScenariosJSON)
		}
		// test-infra's controller reads the scenario as one object under
		// "scenarios" (kubehelpers.UpdateConfigMapWithServerPort) and sets
		// its server port; our driver reads it back as a list of one.
		var asController map[string]map[string]json.RawMessage
		if err := json.Unmarshal([]byte(lt.Spec.ScenariosJSON), &asController); err != nil || asController["scenarios"]["server_config"] == nil {
			t.Errorf("%s: test-infra's controller cannot read its scenarios (%v): %s", lt.Metadata.Name, err, lt.Spec.ScenariosJSON)
		}
		if s, err := driver.ParseScenarios([]byte(lt.Spec.ScenariosJSON)); err != nil || len(s.Scenarios) != 1 {
			t.Errorf("%s: the driver cannot read its scenarios: %v", lt.Metadata.Name, err)
		}
	}
	one := renderArgs(t, "-servers=lisp", "-clients=go", "-scenarios=unary_ping_pong", "-payloads=0", "-driver_image=grpcbench/driver:1")
	if len(one) != 1 || one[0].Spec.Driver.Run[0].Image != "grpcbench/driver:1" || one[0].Metadata.Labels["server"] != "lisp" {
		t.Errorf("one LoadTest with a driver image: %+v", one)
	}
}

func TestBadFlagsAreRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-lisp_image=x"}, "-go_image is required"},
		{append(images, "-servers=java"), "not go or lisp"},
		{append(images, "-scenarios=nope"), "no scenario"},
		{append(images, "-payloads=x"), "-payloads"},
		{append(images, "-benchmark_seconds=0"), "benchmark_seconds"},
		{append(images, "-timeout_seconds=10"), "timeout_seconds"},
		{append(images, "extra"), "unexpected arguments"},
	} {
		var out strings.Builder
		if _, err := parseFlags(c.args, &out); err == nil || !strings.Contains(out.String(), c.want) || !strings.Contains(out.String(), "Usage") {
			t.Errorf("%q: %v, output %q; want %q and the usage", c.args, err, out.String(), c.want)
		}
	}
}
