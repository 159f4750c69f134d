package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/grpcbench/grpcbench/tools/oci/ocilayout"
)

// runPush uploads a layout's root (an image or an index) and tags it. Credentials come from the
// usual Docker config (~/.docker/config.json and credential helpers), as with crane.
func runPush(args []string) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	dir := fs.String("layout", "", "OCI layout to push")
	registry := fs.String("registry", "", "registry to push to, HOST[:PORT]")
	repository := fs.String("repository", "", "repository in the registry, e.g. grpcbench/routeguide-server")
	tags := fs.String("tags", "latest", "comma-separated tags")
	insecure := fs.Bool("insecure", false, "use plain HTTP (loopback and private addresses always do)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required("layout", *dir, "registry", *registry, "repository", *repository); err != nil {
		return err
	}
	root, err := ocilayout.Read(*dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var opts []name.Option
	if *insecure {
		opts = append(opts, name.Insecure)
	}
	auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	for _, tag := range strings.Split(*tags, ",") {
		ref, err := name.NewTag(*registry+"/"+*repository+":"+tag, opts...)
		if err != nil {
			return err
		}
		if root.Index != nil {
			err = remote.WriteIndex(ref, root.Index, auth)
		} else {
			err = remote.Write(ref, root.Image, auth)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		fmt.Printf("pushed %s@%s\n", ref, root.Digest())
	}
	return nil
}
