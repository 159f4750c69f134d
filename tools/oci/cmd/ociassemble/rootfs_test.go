package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The layer's modes are the manifest's, whatever the source files' own modes: a remote worker
// hands every input over as executable.
func TestRootfsModesComeFromTheManifest(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libc.so.6")
	loader := filepath.Join(dir, "ld.so")
	for _, f := range []string{lib, loader} {
		if err := os.WriteFile(f, []byte("ELF"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(loader, 0o444); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "manifest")
	lines := "lib/x86_64-linux-gnu/libc.so.6\t" + lib + "\t0644\nlib64/ld.so\t" + loader + "\t0755\n"
	if err := os.WriteFile(manifest, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "layer.tar")
	if err := runRootfs([]string{"--manifest", manifest, "--out", out}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]int64{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = h.Mode
	}
	want := map[string]int64{
		"lib/": 0o755, "lib/x86_64-linux-gnu/": 0o755, "lib64/": 0o755,
		"lib/x86_64-linux-gnu/libc.so.6": 0o644, "lib64/ld.so": 0o755,
	}
	if len(got) != len(want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	for name, mode := range want {
		if got[name] != mode {
			t.Errorf("%s: mode %o, want %o", name, got[name], mode)
		}
	}
}

func TestRootfsRejectsABadManifest(t *testing.T) {
	dir := t.TempDir()
	for _, line := range []string{"a\tb", "a\tb\t0999", "a\tb\t04755", "a\tb\t0644\textra"} {
		manifest := filepath.Join(dir, "manifest")
		if err := os.WriteFile(manifest, []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := runRootfs([]string{"--manifest", manifest, "--out", filepath.Join(dir, "out.tar")})
		if err == nil || !strings.Contains(err.Error(), manifest) {
			t.Errorf("manifest line %q: error %v, want one naming the manifest", line, err)
		}
	}
}
