package image

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/grpcbench/grpcbench/internal/runfile"
	"github.com/grpcbench/grpcbench/tools/oci/ocilayout"
)

var serverIndex = flag.String("server_index", "", "$(rlocationpath) of the server's oci_image_index")

// unpacked is one image of the index, its flattened file system written under root.
type unpacked struct {
	root       string
	config     *v1.ConfigFile
	entrypoint []string
}

// unpackImage extracts the image for arch from the server index into a new temporary directory.
func unpackImage(t *testing.T, arch string) unpacked {
	t.Helper()
	if *serverIndex == "" {
		t.Skip("needs the Bazel-built image: tools/bazel test //lisp/routeguide/image:image_test")
	}
	layout := runfile.Path(*serverIndex)
	root, err := ocilayout.Read(layout)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if root.Index == nil {
		t.Fatalf("%s holds a single image, want an index", layout)
	}
	m, err := root.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Manifests {
		if d.Platform == nil || d.Platform.Architecture != arch {
			continue
		}
		img, err := root.Index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "rootfs")
		if err := ocilayout.Extract(img, dir); err != nil {
			t.Fatal(err)
		}
		return unpacked{root: dir, config: cf, entrypoint: cf.Config.Entrypoint}
	}
	t.Fatalf("%s has no %s image", layout, arch)
	return unpacked{}
}

// inRoot resolves name as a process chrooted into root would: symbolic links are followed, and
// absolute ones and ".." stay inside root. It returns the host path of what name denotes.
func inRoot(root, name string) (string, error) {
	cur := "/"
	rest := strings.Split(name, "/")
	for links := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		if c == "" || c == "." {
			continue
		}
		next := path.Join(cur, c) // path.Join stops ".." at "/"
		host := filepath.Join(root, next)
		fi, err := os.Lstat(host)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > 40 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", name)
		}
		target, err := os.Readlink(host)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return filepath.Join(root, cur), nil
}
