package tests

import (
	"os"
	"path/filepath"
)

// runfile resolves an $(rlocationpath) argument: go_test runs in its package's directory, not at
// the runfiles root, so paths are taken relative to the root that Bazel names in the environment.
func runfile(rlocation string) string {
	root := os.Getenv("RUNFILES_DIR")
	if root == "" {
		root = os.Getenv("TEST_SRCDIR")
	}
	return filepath.Join(root, rlocation)
}
