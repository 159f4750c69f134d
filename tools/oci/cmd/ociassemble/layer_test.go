package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

type member struct {
	name, body string
	typ        byte
	mode       int64
}

// writeTar writes members in the given order with the given owner names and timestamp.
func writeTar(t *testing.T, file string, members []member, owner string, mtime time.Time, compress bool) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Typeflag: m.typ, Mode: m.mode, Size: int64(len(m.body)),
			ModTime: mtime, Uname: owner, Gname: owner, Linkname: ""}
		if m.typ == tar.TypeSymlink {
			h.Size, h.Linkname = 0, m.body
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if m.typ == tar.TypeReg {
			tw.Write([]byte(m.body))
		}
	}
	tw.Close()
	data := buf.Bytes()
	if compress {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		data = z.Bytes()
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNormalizeLayerIsCanonical(t *testing.T) {
	dir := t.TempDir()
	a := []member{
		{"./", "", tar.TypeDir, 0o755},
		{"./usr/", "", tar.TypeDir, 0o755},
		{"./usr/bin/", "", tar.TypeDir, 0o755},
		{"./usr/bin/server", "ELF...", tar.TypeReg, 0o100755},
		{"./usr/bin/link", "server", tar.TypeSymlink, 0o777},
	}
	b := []member{a[4], a[3], a[2], a[1]} // another order, no root entry
	writeTar(t, filepath.Join(dir, "a.tar"), a, "alice", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), false)
	writeTar(t, filepath.Join(dir, "b.tar"), b, "bob", time.Now(), true)
	for _, n := range []string{"a", "b"} {
		if err := normalizeLayer(filepath.Join(dir, n+".tar"), filepath.Join(dir, n+".tgz")); err != nil {
			t.Fatal(err)
		}
	}
	ga, _ := os.ReadFile(filepath.Join(dir, "a.tgz"))
	gb, _ := os.ReadFile(filepath.Join(dir, "b.tgz"))
	if !bytes.Equal(ga, gb) {
		t.Fatal("the same files in another order, with other owners and times, gave another layer")
	}
	zr, err := gzip.NewReader(bytes.NewReader(ga))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(epoch) || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: mtime %v, owner %q:%q; want the epoch and no names", h.Name, h.ModTime, h.Uname, h.Gname)
		}
		if h.Name == "usr/bin/server" && h.Mode != 0o755 {
			t.Errorf("%s: mode %o, want 755", h.Name, h.Mode)
		}
	}
	want := []string{"usr/", "usr/bin/", "usr/bin/link", "usr/bin/server"}
	if len(names) != len(want) {
		t.Fatalf("entries %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("entries %q, want %q", names, want)
		}
	}
}

func TestNormalizeLayerRejectsEscapes(t *testing.T) {
	dir := t.TempDir()
	writeTar(t, filepath.Join(dir, "bad.tar"), []member{{"../etc/passwd", "x", tar.TypeReg, 0o644}}, "", epoch, false)
	if err := normalizeLayer(filepath.Join(dir, "bad.tar"), filepath.Join(dir, "out")); err == nil {
		t.Fatal("a path outside the root was accepted")
	}
}

func TestMergeEnv(t *testing.T) {
	got := mergeEnv([]string{"PATH=/bin", "A=1"}, []string{"A=2", "B=3"})
	want := []string{"PATH=/bin", "A=2", "B=3"}
	if len(got) != len(want) {
		t.Fatalf("%q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%q, want %q", got, want)
		}
	}
}
