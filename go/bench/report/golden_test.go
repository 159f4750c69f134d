package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// checkGolden compares got with testdata/golden/name, or rewrites it with
// -update. Review the diff of a rewrite like code: it is the output.
func checkGolden(t *testing.T, name string, got []byte) {
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

func readFiles(t *testing.T, names ...string) []*schema.File {
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

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name   string
		inputs []string
	}{
		{"cri", []string{"cri.json"}},
		{"routeguide", []string{"routeguide_go.json", "routeguide_lisp.json"}},
		{"tournament", []string{"tournament.json"}},
		{"unknown", []string{"unknown.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Render(readFiles(t, tt.inputs...), Options{Charts: true})
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.name+".md", []byte(r.Markdown))
			for _, c := range r.Charts {
				checkGolden(t, c.Name, c.SVG)
			}
		})
	}
}

func TestCompareGolden(t *testing.T) {
	c, err := Compare(readFiles(t, "compare_old.json"), readFiles(t, "compare_new.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "compare.md", []byte(c.Markdown()))
}
