package main

import (
	"flag"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/grpcbench/grpcbench/tools/oci/ocilayout"
)

// runTarball writes a single-image layout as a `docker load` / `podman load` tarball.
func runTarball(args []string) error {
	fs := flag.NewFlagSet("tarball", flag.ContinueOnError)
	dir := fs.String("layout", "", "OCI layout holding a single image")
	tag := fs.String("tag", "", "the name the loaded image gets, e.g. grpcbench/routeguide-server:latest")
	out := fs.String("out", "", "tarball to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required("layout", *dir, "tag", *tag, "out", *out); err != nil {
		return err
	}
	r, err := ocilayout.ReadImage(*dir)
	if err != nil {
		return err
	}
	defer r.Close()
	// No registry host is implied: a bare name stays local to the daemon that loads it.
	ref, err := name.NewTag(*tag, name.WithDefaultRegistry(""))
	if err != nil {
		return err
	}
	return tarball.WriteToFile(*out, ref, r.Image)
}
