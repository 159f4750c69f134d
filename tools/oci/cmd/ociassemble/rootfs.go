package main

import (
	"archive/tar"
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// runRootfs writes a tar of chosen files, for the rootfs_tar rule: --manifest has one
// "DEST<TAB>SRC" line per file. Parent directories are added, entries are sorted and timestamps
// are the epoch; a file is 0755 if its source is executable, else 0644.
func runRootfs(args []string) error {
	fs := flag.NewFlagSet("rootfs", flag.ContinueOnError)
	manifest := fs.String("manifest", "", "file of DEST<TAB>SRC lines")
	out := fs.String("out", "", "tar file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required("manifest", *manifest, "out", *out); err != nil {
		return err
	}
	files, err := readManifest(*manifest)
	if err != nil {
		return err
	}
	dirs := map[string]bool{}
	for dest := range files {
		for d := path.Dir(dest); d != "."; d = path.Dir(d) {
			dirs[d+"/"] = true
		}
	}
	names := make([]string, 0, len(files)+len(dirs))
	for n := range files {
		names = append(names, n)
	}
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, n := range names {
		if err := addEntry(tw, n, files[n]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func readManifest(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		dest, src, ok := strings.Cut(s.Text(), "\t")
		if !ok {
			return nil, fmt.Errorf("%s: bad line %q", file, s.Text())
		}
		dest = path.Clean(strings.TrimLeft(dest, "/"))
		if prev, dup := files[dest]; dup {
			return nil, fmt.Errorf("%s: both %s and %s", dest, prev, src)
		}
		files[dest] = src
	}
	return files, s.Err()
}

// addEntry writes a directory (name ends in "/", src is empty) or the regular file src as name.
func addEntry(tw *tar.Writer, name, src string) error {
	h := &tar.Header{Name: name, ModTime: epoch, Format: tar.FormatPAX}
	if src == "" {
		h.Typeflag, h.Mode = tar.TypeDir, 0o755
		return tw.WriteHeader(h)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	h.Typeflag, h.Size, h.Mode = tar.TypeReg, st.Size(), 0o644
	if st.Mode()&0o111 != 0 {
		h.Mode = 0o755
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err = io.Copy(tw, in)
	return err
}
