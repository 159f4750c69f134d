package main

import (
	"archive/tar"
	"fmt"
	"io"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// readFile returns the contents of the absolute path p in the image's flattened file system,
// following symbolic links inside the image.
func readFile(img v1.Image, p string) ([]byte, error) {
	for range 40 {
		h, data, err := find(img, strings.TrimPrefix(path.Clean(p), "/"))
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeSymlink {
			return data, nil
		}
		if path.IsAbs(h.Linkname) {
			p = h.Linkname
		} else {
			p = path.Join(path.Dir("/"+h.Name), h.Linkname)
		}
	}
	return nil, fmt.Errorf("%s: too many levels of symbolic links", p)
}

// find returns the entry for name (no leading slash) of the flattened image and, for a regular
// file, its contents.
func find(img v1.Image, name string) (*tar.Header, []byte, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, nil, fmt.Errorf("/%s: not in the image", name)
		}
		if err != nil {
			return nil, nil, err
		}
		if strings.TrimSuffix(strings.TrimPrefix(path.Clean(h.Name), "./"), "/") != name {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return h, nil, nil
		}
		b, err := io.ReadAll(tr)
		return h, b, err
	}
}
