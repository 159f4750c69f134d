// Package runfile resolves the paths that BUILD files hand to Go tests as
// $(rlocationpath ...): go_test runs in its package's directory, so such a
// path is taken relative to the runfiles root that Bazel names in the
// environment. Under plain `go test` there is no such root, and a path is
// used as given (an absolute path always is).
package runfile

import (
	"os"
	"path/filepath"
)

// Path is the file that rlocation names.
func Path(rlocation string) string {
	if filepath.IsAbs(rlocation) {
		return rlocation
	}
	root := os.Getenv("RUNFILES_DIR")
	if root == "" {
		root = os.Getenv("TEST_SRCDIR")
	}
	if root == "" {
		return rlocation
	}
	return filepath.Join(root, rlocation)
}

// UnderBazel is true when the test runs under `bazel test`.
func UnderBazel() bool { return os.Getenv("TEST_SRCDIR") != "" }
