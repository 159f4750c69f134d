// Package goldenfile compares a test's output with a file checked in under
// testdata/golden, or rewrites that file when the test runs with -update;
// and reads the results files under testdata that the output is rendered
// from.
package goldenfile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// Check compares got with testdata/golden/name, or rewrites it with
// -update. Review the diff of a rewrite like code: it is the output.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update and review the diff)\ngot:\n%s", path, got)
	}
}

// ReadResults reads the results files testdata/NAME, in order.
func ReadResults(t testing.TB, names ...string) []*schema.File {
	t.Helper()
	var files []*schema.File
	for _, n := range names {
		f, err := schema.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}
