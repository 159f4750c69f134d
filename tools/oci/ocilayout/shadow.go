package ocilayout

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Bazel hands a layout to its consumers as a tree of symbolic links (sandbox inputs, runfiles),
// and go-containerregistry's layout package refuses symlinked blobs. shadow returns dir itself if
// no blob is a symbolic link, or else a temporary copy made of hard links to (or, across file
// systems, copies of) the files the links resolve to; cleanup removes it.
func shadow(dir string) (root string, cleanup func(), err error) {
	noop := func() {}
	linked := false
	err = filepath.WalkDir(filepath.Join(dir, "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			linked = true
			return fs.SkipAll
		}
		return err
	})
	if err != nil || !linked {
		return dir, noop, err
	}
	tmp, err := os.MkdirTemp("", "ocilayout")
	if err != nil {
		return "", noop, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(tmp, rel)
		st, err := os.Stat(p) // follows links
		if err != nil {
			return err
		}
		if st.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		return linkOrCopy(p, dst)
	})
	if err != nil {
		cleanup()
		return "", noop, err
	}
	return tmp, cleanup, nil
}

func linkOrCopy(src, dst string) error {
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	if os.Link(real, dst) == nil {
		return nil
	}
	in, err := os.Open(real)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
