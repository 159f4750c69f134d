package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/grpcbench/grpcbench/tools/oci/ocilayout"
)

// runImage builds one image: the base (or scratch), one layer per --layer, then the config.
func runImage(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	configFile := fs.String("config", "", "JSON file with the image config (see imageConfig)")
	out := fs.String("out", "", "directory to write the OCI layout to")
	digestFile := fs.String("digest", "", "file to write the image's digest to")
	base := fs.String("base", "", "OCI layout of the base image; scratch if empty")
	scratch := fs.String("scratch", "", "directory for temporary layer files")
	var layers listFlag
	fs.Var(&layers, "layer", "a tar file (plain or gzip) to add as a layer; repeatable, in order")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required("config", *configFile, "out", *out, "digest", *digestFile); err != nil {
		return err
	}
	cfg, err := readImageConfig(*configFile)
	if err != nil {
		return err
	}
	img, closeBase, err := baseImage(*base)
	if err != nil {
		return err
	}
	defer closeBase()
	tmp, err := os.MkdirTemp(*scratch, "layers")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for i, src := range layers {
		if img, err = appendLayer(img, src, filepath.Join(tmp, fmt.Sprintf("%d.tar.gz", i))); err != nil {
			return err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cfg.apply(cf)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	return writeImage(*out, *digestFile, img)
}

// baseImage is the image in the layout dir, or an empty OCI image for scratch; call done when the
// new image is written.
func baseImage(dir string) (img v1.Image, done func(), err error) {
	if dir != "" {
		r, err := ocilayout.ReadImage(dir)
		if err != nil {
			return nil, nil, err
		}
		return r.Image, r.Close, nil
	}
	// empty.Image has Docker media types; everything here is OCI.
	img = mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), func() {}, nil
}

// appendLayer adds the tar src, normalized into the file tmp, as the image's next layer.
func appendLayer(img v1.Image, src, tmp string) (v1.Image, error) {
	if err := normalizeLayer(src, tmp); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromFile(tmp, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   v1.Time{Time: epoch},
			CreatedBy: "ociassemble: " + filepath.Base(src),
		},
	})
}

func writeImage(dir, digestFile string, img v1.Image) error {
	if err := ocilayout.WriteImage(dir, img); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	return os.WriteFile(digestFile, []byte(d.String()+"\n"), 0o644)
}
