package runfile

import (
	"path/filepath"
	"testing"
)

func TestPath(t *testing.T) {
	t.Setenv("RUNFILES_DIR", "/r")
	if got := Path("_main/go/x"); got != filepath.Join("/r", "_main/go/x") {
		t.Errorf("relative: %q", got)
	}
	if got := Path("/abs/x"); got != "/abs/x" {
		t.Errorf("absolute: %q", got)
	}
	t.Setenv("RUNFILES_DIR", "")
	t.Setenv("TEST_SRCDIR", "/s")
	if got := Path("a/b"); got != filepath.Join("/s", "a/b") {
		t.Errorf("TEST_SRCDIR: %q", got)
	}
	t.Setenv("TEST_SRCDIR", "")
	if got := Path("a/b"); got != "a/b" {
		t.Errorf("no runfiles root: %q", got)
	}
}
