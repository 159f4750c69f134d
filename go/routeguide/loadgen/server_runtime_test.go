package main

import (
	"os"
	"strings"
	"testing"
)

// A started server's runtime settings: the defaults, or the variables it
// inherits, so that a tuned run shows as one.
func TestServerRuntime(t *testing.T) {
	for _, v := range runtimeVariables {
		t.Setenv(v, "")
		// Setenv then Unsetenv through the test's cleanup: the variable is
		// absent, as in a Bazel action's strict environment.
		unsetForTest(t, v)
	}
	if got := serverRuntime(); !strings.HasPrefix(got, "runtime defaults") {
		t.Errorf("no variables set: %q", got)
	}
	t.Setenv("GOGC", "800")
	if got := serverRuntime(); got != "environment GOGC=800" {
		t.Errorf("GOGC=800 set: %q", got)
	}
}

// unsetForTest removes v from the environment for the rest of the test;
// t.Setenv before it restores the old value afterwards.
func unsetForTest(t *testing.T, v string) {
	t.Helper()
	if err := os.Unsetenv(v); err != nil {
		t.Fatal(err)
	}
}
