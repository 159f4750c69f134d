// Package ocilayout reads and writes the OCI image layouts that the //tools/oci rules pass between
// actions: a directory whose index.json names exactly one image or one image index.
package ocilayout

import (
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Root is what a layout holds: exactly one of Image and Index is set. Close it when done.
type Root struct {
	Descriptor v1.Descriptor
	Image      v1.Image
	Index      v1.ImageIndex
	cleanup    func()
}

// Close releases what Read made to read the layout; the image or index is unusable afterwards.
func (r *Root) Close() { r.cleanup() }

// Read opens the layout at dir and returns its single root.
func Read(dir string) (*Root, error) {
	real, cleanup, err := shadow(dir)
	if err != nil {
		return nil, err
	}
	r, err := read(real)
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	r.cleanup = cleanup
	return r, nil
}

func read(dir string) (*Root, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	ii, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := ii.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("index.json names %d manifests, want exactly 1", len(m.Manifests))
	}
	desc := m.Manifests[0]
	r := &Root{Descriptor: desc}
	switch {
	case desc.MediaType.IsIndex():
		r.Index, err = ii.ImageIndex(desc.Digest)
	case desc.MediaType.IsImage():
		r.Image, err = ii.Image(desc.Digest)
	default:
		err = fmt.Errorf("root has media type %q, neither an image nor an index", desc.MediaType)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ReadImage is Read for a layout that must hold a single image.
func ReadImage(dir string) (*Root, error) {
	r, err := Read(dir)
	if err != nil {
		return nil, err
	}
	if r.Image == nil {
		r.Close()
		return nil, fmt.Errorf("%s: holds an image index, want a single image", dir)
	}
	return r, nil
}

// Digest returns the digest of the layout's root, as `sha256:...`.
func (r *Root) Digest() v1.Hash { return r.Descriptor.Digest }

// WriteImage writes img as the only root of a new layout at dir (created or empty).
func WriteImage(dir string, img v1.Image) error {
	p, err := create(dir)
	if err != nil {
		return err
	}
	return p.AppendImage(img)
}

// WriteIndex writes ii as the only root of a new layout at dir (created or empty).
func WriteIndex(dir string, ii v1.ImageIndex) error {
	p, err := create(dir)
	if err != nil {
		return err
	}
	return p.AppendIndex(ii)
}

func create(dir string) (layout.Path, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return layout.Write(dir, empty.Index)
}
