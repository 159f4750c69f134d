package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/grpcbench/grpcbench/tools/oci/ocilayout"
)

// platformImage is one image of the layout with the platform its index descriptor claims.
type platformImage struct {
	platform string
	img      v1.Image
}

// checkRoot validates the layout's root and returns its images: those of an index, in order, or
// the single image.
func checkRoot(c *checker, root *ocilayout.Root, platforms []string) []platformImage {
	if root.Image != nil {
		c.check("validate.Image", validate.Image(root.Image))
		if len(platforms) != 1 {
			c.check("platforms", fmt.Errorf("a single image, but %d platforms expected", len(platforms)))
			return nil
		}
		return []platformImage{{platforms[0], root.Image}}
	}
	c.check("validate.Index", validate.Index(root.Index))
	m, err := root.Index.IndexManifest()
	if !c.check("index manifest", err) {
		return nil
	}
	var got []string
	var images []platformImage
	for _, d := range m.Manifests {
		if d.Platform == nil {
			c.check("descriptor platform", fmt.Errorf("%s has none", d.Digest))
			continue
		}
		img, err := root.Index.Image(d.Digest)
		if !c.check("image "+d.Platform.String(), err) {
			continue
		}
		got = append(got, d.Platform.String())
		images = append(images, platformImage{d.Platform.String(), img})
	}
	if !slices.Equal(got, platforms) {
		c.check("platforms", fmt.Errorf("index has %v, want %v", got, platforms))
	} else {
		c.check("platforms "+strings.Join(got, ","), nil)
	}
	return images
}

// checkImage checks one image's config and that its entrypoint is an executable for its CPU.
func checkImage(c *checker, pi platformImage, entrypoint []string) {
	cf, err := pi.img.ConfigFile()
	if !c.check(pi.platform+": config", err) {
		return
	}
	if got := cf.OS + "/" + cf.Architecture; got != pi.platform {
		c.check(pi.platform+": config os/architecture", fmt.Errorf("config says %s", got))
	} else {
		c.check(pi.platform+": config os/architecture", nil)
	}
	if !slices.Equal(cf.Config.Entrypoint, entrypoint) {
		c.check(pi.platform+": entrypoint", fmt.Errorf("%q, want %q", cf.Config.Entrypoint, entrypoint))
		return
	}
	c.check(pi.platform+": entrypoint "+strings.Join(entrypoint, " "), nil)
	if len(entrypoint) == 0 {
		return
	}
	b, err := readFile(pi.img, entrypoint[0])
	if !c.check(pi.platform+": "+entrypoint[0]+" in the image", err) {
		return
	}
	c.check(pi.platform+": "+entrypoint[0]+" is an ELF executable for "+cf.Architecture, elfFor(b, cf.Architecture))
}

// machines maps OCI architectures to the ELF machine their executables have.
var machines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
}

func elfFor(b []byte, arch string) error {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return err
	}
	want, ok := machines[arch]
	if !ok {
		return fmt.Errorf("no ELF machine known for %q", arch)
	}
	if f.Machine != want {
		return fmt.Errorf("ELF machine %s, want %s", f.Machine, want)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("ELF type %s, not an executable", f.Type)
	}
	return nil
}

func sameDigest(root *ocilayout.Root, other string) error {
	o, err := ocilayout.Read(other)
	if err != nil {
		return err
	}
	defer o.Close()
	if o.Digest() != root.Digest() {
		return fmt.Errorf("%s, want %s", o.Digest(), root.Digest())
	}
	return nil
}
