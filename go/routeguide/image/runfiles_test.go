package image

import (
	"os"
	"path/filepath"
)

// runfile resolves an $(rlocationpath) argument: go_test runs in its package's directory, so the
// path is taken relative to the runfiles root that Bazel names in the environment.
func runfile(rlocation string) string {
	root := os.Getenv("RUNFILES_DIR")
	if root == "" {
		root = os.Getenv("TEST_SRCDIR")
	}
	return filepath.Join(root, rlocation)
}
