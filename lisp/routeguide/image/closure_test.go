package image

import (
	"debug/elf"
	"path"
	"strings"
	"testing"
)

// The loader's default search path, without /etc/ld.so.cache or LD_LIBRARY_PATH: Debian builds
// glibc with the multiarch directories first (see `strings` of ld.so).
func searchPath(triplet string) []string {
	return []string{"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"}
}

// TestImagesCarryTheirLibraries checks each image statically, for both CPUs: the entrypoint is an
// ELF executable whose PT_INTERP exists in the image, and every DT_NEEDED library, transitively, is
// found in the loader's default search path inside the image, for the same machine; so is
// libssl.so.3, which the server opens by name when it serves TLS, and what it needs.
func TestImagesCarryTheirLibraries(t *testing.T) {
	for _, c := range []struct {
		arch, triplet string
		machine       elf.Machine
		interp        string
	}{
		{"amd64", "x86_64-linux-gnu", elf.EM_X86_64, "/lib64/ld-linux-x86-64.so.2"},
		{"arm64", "aarch64-linux-gnu", elf.EM_AARCH64, "/lib/ld-linux-aarch64.so.1"},
	} {
		t.Run(c.arch, func(t *testing.T) {
			img := unpackImage(t, c.arch)
			if len(img.entrypoint) == 0 {
				t.Fatal("the image has no entrypoint")
			}
			exe := openELF(t, img.root, img.entrypoint[0], c.machine)
			interp := programInterpreter(t, exe)
			if interp != c.interp {
				t.Errorf("%s: PT_INTERP is %s, want %s", img.entrypoint[0], interp, c.interp)
			}
			openELF(t, img.root, interp, c.machine).Close()

			needed, err := exe.ImportedLibraries()
			exe.Close()
			if err != nil {
				t.Fatal(err)
			}
			needed = append(needed, "libssl.so.3")
			found := map[string]string{}
			for len(needed) > 0 {
				lib := needed[0]
				needed = needed[1:]
				if _, ok := found[lib]; ok {
					continue
				}
				p := lookLibrary(img.root, c.triplet, lib)
				if p == "" {
					t.Errorf("%s is needed but not in the image's %s", lib, strings.Join(searchPath(c.triplet), ":"))
					found[lib] = ""
					continue
				}
				found[lib] = p
				f := openELF(t, img.root, p, c.machine)
				more, err := f.ImportedLibraries()
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				needed = append(needed, more...)
			}
			t.Logf("%s: loader %s, libraries %v", c.arch, interp, found)
		})
	}
}

// lookLibrary returns the image path at which the loader finds lib, or "".
func lookLibrary(root, triplet, lib string) string {
	for _, dir := range searchPath(triplet) {
		p := path.Join(dir, lib)
		if _, err := inRoot(root, p); err == nil {
			return p
		}
	}
	return ""
}

// openELF opens the image's file name (an image path) and requires an ELF file for machine.
func openELF(t *testing.T, root, name string, machine elf.Machine) *elf.File {
	t.Helper()
	host, err := inRoot(root, name)
	if err != nil {
		t.Fatalf("not in the image: %v", err)
	}
	f, err := elf.Open(host)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if f.Machine != machine {
		f.Close()
		t.Fatalf("%s is for %v, want %v", name, f.Machine, machine)
	}
	return f
}

// programInterpreter returns the path that the executable's PT_INTERP names.
func programInterpreter(t *testing.T, f *elf.File) string {
	t.Helper()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			t.Fatal(err)
		}
		return strings.TrimRight(string(b), "\x00")
	}
	t.Fatal("the entrypoint has no PT_INTERP: not a dynamically linked executable")
	return ""
}
