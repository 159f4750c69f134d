package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// entry is one member of a layer: its header and, for a regular file, its contents.
type entry struct {
	hdr  *tar.Header
	data []byte
}

// normalizeLayer rewrites the tar file src (plain or gzip) as the gzip-compressed layer dst, in a
// canonical form: entries sorted by path (so parents precede children), one entry per path (the
// last wins, as on extraction), epoch timestamps, no owner names or extended attributes, and
// permission bits only. Numeric owners and modes are kept: they are the package's intent.
func normalizeLayer(src, dst string) error {
	entries, err := readTar(src)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	// A fixed level and an empty gzip header (no name, zero mtime) keep the blob's digest stable.
	zw, err := gzip.NewWriterLevel(out, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if err := tw.WriteHeader(e.hdr); err != nil {
			return fmt.Errorf("%s: %s: %w", src, e.hdr.Name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return out.Close()
}

// readTar returns the canonical entries of a tar file, sorted and deduplicated.
func readTar(src string) ([]entry, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := maybeGunzip(bufio.NewReader(f))
	if err != nil {
		return nil, err
	}
	byName := map[string]entry{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		e, ok, err := canonical(h, tr)
		if err != nil {
			return nil, err
		}
		if ok {
			byName[e.hdr.Name] = e
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	// Byte order sorts "a/" before "a/b" and keeps every parent ahead of what it contains.
	sort.Strings(names)
	entries := make([]entry, len(names))
	for i, n := range names {
		entries[i] = byName[n]
	}
	return entries, nil
}

// canonical converts one tar member; ok is false for the archive's root directory, which a layer
// does not carry.
func canonical(h *tar.Header, r io.Reader) (e entry, ok bool, err error) {
	name := path.Clean(strings.TrimLeft(strings.TrimPrefix(h.Name, "./"), "/"))
	if name == "." || name == "" {
		return entry{}, false, nil
	}
	if strings.HasPrefix(name, "../") || name == ".." {
		return entry{}, false, fmt.Errorf("%s: path escapes the root", h.Name)
	}
	out := &tar.Header{
		Name:    name,
		Mode:    h.Mode & 0o7777,
		Uid:     h.Uid,
		Gid:     h.Gid,
		ModTime: epoch,
		Format:  tar.FormatPAX,
	}
	switch h.Typeflag {
	case tar.TypeReg:
		out.Typeflag = tar.TypeReg
		e.data, err = io.ReadAll(r)
		if err != nil {
			return entry{}, false, err
		}
		out.Size = int64(len(e.data))
	case tar.TypeDir:
		out.Typeflag = tar.TypeDir
		out.Name += "/"
	case tar.TypeSymlink:
		out.Typeflag = tar.TypeSymlink
		out.Linkname = h.Linkname
	default:
		// Hard links would tie the order of two entries together; pkg_tar does not make them.
		return entry{}, false, fmt.Errorf("%s: unsupported tar entry type %q", h.Name, h.Typeflag)
	}
	e.hdr = out
	return e, true, nil
}

// maybeGunzip returns r decompressed if it starts with the gzip magic number, else r itself.
func maybeGunzip(r *bufio.Reader) (io.Reader, error) {
	magic, err := r.Peek(2)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return gzip.NewReader(r)
	}
	return r, nil
}
