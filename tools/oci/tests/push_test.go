package tests

import (
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var (
	pushIndex   = flag.String("push_index", "", "an oci_push target of an index, repository test/index")
	indexDigest = flag.String("index_digest", "", "the index's digest file")
	pushImage   = flag.String("push_image", "", "an oci_push target of an image, repository test/image, tags v1,latest")
	imageDigest = flag.String("image_digest", "", "the image's digest file")
)

// startRegistry serves crane's in-memory registry on a loopback port and returns HOST:PORT.
func startRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func readDigest(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// push runs an oci_push launcher as `bazel run` would, with the registry given by flag.
func push(t *testing.T, launcher, registry string) {
	t.Helper()
	out, err := exec.Command(runfile.Path(launcher), "--registry="+registry).CombinedOutput()
	t.Logf("%s --registry=%s:\n%s", launcher, registry, out)
	if err != nil {
		t.Fatal(err)
	}
}

func TestPushIndex(t *testing.T) {
	if *pushIndex == "" {
		t.Skip("needs the Bazel-built images: tools/bazel test //tools/oci/tests:tests_test")
	}
	reg := startRegistry(t)
	push(t, *pushIndex, reg)
	ref, err := name.NewTag(reg + "/test/index:latest")
	if err != nil {
		t.Fatal(err)
	}
	ii, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ii.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if want := readDigest(t, runfile.Path(*indexDigest)); d.String() != want {
		t.Errorf("the registry has %s, the build made %s", d, want)
	}
	if err := validate.Index(ii); err != nil {
		t.Errorf("the pushed index does not validate: %v", err)
	}
	m, err := ii.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 {
		t.Errorf("the pushed index has %d manifests, want 2 (amd64, arm64)", len(m.Manifests))
	}
}

func TestPushImageTags(t *testing.T) {
	if *pushImage == "" {
		t.Skip("needs the Bazel-built images: tools/bazel test //tools/oci/tests:tests_test")
	}
	reg := startRegistry(t)
	push(t, *pushImage, reg)
	want := readDigest(t, runfile.Path(*imageDigest))
	for _, tag := range []string{"v1", "latest"} {
		ref, err := name.NewTag(reg + "/test/image:" + tag)
		if err != nil {
			t.Fatal(err)
		}
		img, err := remote.Image(ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if d, _ := img.Digest(); d.String() != want {
			t.Errorf("%s is %s, the build made %s", ref, d, want)
		}
		if err := validate.Image(img); err != nil {
			t.Errorf("%s does not validate: %v", ref, err)
		}
	}
}

func TestPushNeedsRegistry(t *testing.T) {
	if *pushImage == "" {
		t.Skip("needs the Bazel-built images: tools/bazel test //tools/oci/tests:tests_test")
	}
	out, err := exec.Command(runfile.Path(*pushImage)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--registry is required") {
		t.Errorf("without --registry: err %v, output %q; want a usage error", err, out)
	}
}
