package tests

import (
	"flag"
	"github.com/grpcbench/grpcbench/internal/runfile"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	tool   = flag.String("ociassemble", "", "the ociassemble binary")
	layer  = flag.String("layer", "", "a layer tar of the test image")
	config = flag.String("config", "", "the test image's config file, as oci_image wrote it")
	built  = flag.String("built_digest", "", "the test image's digest, as Bazel built it")
)

// copyInput copies src into dir with the given mode and modification time, so that the second
// build sees other file metadata at another path.
func copyInput(t *testing.T, src, dir string, mode os.FileMode, mtime time.Time) string {
	t.Helper()
	b, err := os.ReadFile(runfile.Path(src))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dst, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestRebuildGivesSameDigest runs the image action again, twice, outside Bazel's action cache:
// other paths, other input timestamps and modes, other times of day. Every digest must be the one
// Bazel built.
func TestRebuildGivesSameDigest(t *testing.T) {
	if *tool == "" {
		t.Skip("needs the Bazel-built tool: tools/bazel test //tools/oci/tests:tests_test")
	}
	want := readDigest(t, runfile.Path(*built))
	for i, mtime := range []time.Time{time.Unix(1e9, 0), time.Now()} {
		dir := t.TempDir()
		in := filepath.Join(dir, "in")
		if err := os.Mkdir(in, 0o755); err != nil {
			t.Fatal(err)
		}
		mode := []os.FileMode{0o644, 0o600}[i]
		l := copyInput(t, *layer, in, mode, mtime)
		c := copyInput(t, *config, in, mode, mtime)
		out := filepath.Join(dir, "out", "image")
		digest := filepath.Join(dir, "digest")
		cmd := exec.Command(runfile.Path(*tool), "image", "--config", c, "--layer", l, "--out", out, "--digest", digest)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, b)
		}
		if got := readDigest(t, digest); got != want {
			t.Errorf("build %d gave %s, Bazel's %s", i+1, got, want)
		}
		if !strings.HasPrefix(want, "sha256:") {
			t.Errorf("digest %q is not a sha256 digest", want)
		}
	}
}
