package main

import (
	"flag"
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/grpcbench/grpcbench/tools/oci/ocilayout"
)

// runIndex combines single-image layouts into one multi-platform image index, in the order given.
func runIndex(args []string) error {
	fs := flag.NewFlagSet("index", flag.ContinueOnError)
	out := fs.String("out", "", "directory to write the OCI layout to")
	digestFile := fs.String("digest", "", "file to write the index's digest to")
	var images listFlag
	fs.Var(&images, "image", "OCI layout of one platform's image; repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required("out", *out, "digest", *digestFile); err != nil {
		return err
	}
	if len(images) == 0 {
		return fmt.Errorf("no --image given")
	}
	ii := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	seen := map[string]string{}
	for _, dir := range images {
		r, err := ocilayout.ReadImage(dir)
		if err != nil {
			return err
		}
		defer r.Close()
		img := r.Image
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		p := cf.Platform()
		if p == nil || p.OS == "" || p.Architecture == "" {
			return fmt.Errorf("%s: config names no platform", dir)
		}
		if other, dup := seen[p.String()]; dup {
			return fmt.Errorf("%s and %s are both for %s", other, dir, p)
		}
		seen[p.String()] = dir
		ii = mutate.AppendManifests(ii, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: p},
		})
	}
	if err := ocilayout.WriteIndex(*out, ii); err != nil {
		return err
	}
	d, err := ii.Digest()
	if err != nil {
		return err
	}
	return os.WriteFile(*digestFile, []byte(d.String()+"\n"), 0o644)
}
