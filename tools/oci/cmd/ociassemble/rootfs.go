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
	"strconv"
	"strings"
)

// runRootfs writes a tar of chosen files, for the rootfs_tar rule: --manifest has one
// "DEST<TAB>SRC<TAB>MODE" line per file (MODE in octal). Parent directories are added (0755),
// entries are sorted and timestamps are the epoch. The mode comes from the manifest, never from
// the source file: a remote worker hands inputs over with modes of its own.
func runRootfs(args []string) error {
	fs := flag.NewFlagSet("rootfs", flag.ContinueOnError)
	manifest := fs.String("manifest", "", "file of DEST<TAB>SRC<TAB>MODE lines")
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

// rootfsEntry is one file of the layer: where its content is read from, and its mode.
type rootfsEntry struct {
	src  string
	mode int64
}

func readManifest(file string) (map[string]rootfsEntry, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string]rootfsEntry{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Split(s.Text(), "\t")
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s: bad line %q: want DEST<TAB>SRC<TAB>MODE", file, s.Text())
		}
		dest, src := path.Clean(strings.TrimLeft(fields[0], "/")), fields[1]
		mode, err := strconv.ParseInt(fields[2], 8, 32)
		if err != nil || mode&^0o777 != 0 {
			return nil, fmt.Errorf("%s: bad mode %q for %s", file, fields[2], dest)
		}
		if prev, dup := files[dest]; dup {
			return nil, fmt.Errorf("%s: both %s and %s", dest, prev.src, src)
		}
		files[dest] = rootfsEntry{src: src, mode: mode}
	}
	return files, s.Err()
}

// addEntry writes a directory (name ends in "/", e is zero) or the regular file e.src as name.
func addEntry(tw *tar.Writer, name string, e rootfsEntry) error {
	h := &tar.Header{Name: name, ModTime: epoch, Format: tar.FormatPAX}
	if e.src == "" {
		h.Typeflag, h.Mode = tar.TypeDir, 0o755
		return tw.WriteHeader(h)
	}
	in, err := os.Open(e.src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	h.Typeflag, h.Size, h.Mode = tar.TypeReg, st.Size(), e.mode
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err = io.Copy(tw, in)
	return err
}
