package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
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

// The RouteGuide matrix: the Go and the Lisp server, each measured by the
// Go and the Lisp load generator (real quick results, trimmed to the
// metrics the layout shows). Every server comparison is made with one
// client and every client comparison against one server, so each section
// has a table per RPC kind and client (or server).
func TestRenderRouteGuideMatrixGolden(t *testing.T) {
	var inputs []string
	for _, client := range []string{"go", "lisp"} {
		for _, server := range []string{"go", "lisp"} {
			inputs = append(inputs, "routeguide_matrix_"+server+"_server_"+client+"_client.json")
		}
	}
	r, err := Render(readFiles(t, inputs...), Options{Charts: true})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "routeguide_matrix.md", []byte(r.Markdown))
	for _, want := range []string{
		"#### rpc=unary, client=go\n\n| Clients | Go (req/s) | Lisp (req/s) | Lisp/Go | Lisp vs Go |",
		"#### rpc=unary, impl=lisp\n\n| Clients | Go client (req/s) | Lisp client (req/s) |",
		"#### impl=lisp, client=lisp\n\n| RPC type | clients=1 | clients=10 | clients=100 |",
	} {
		if !strings.Contains(r.Markdown, want) {
			t.Errorf("no %q in the report", want)
		}
	}
	// req/s by clients: one chart per server and client; Go vs Lisp: one
	// per RPC kind and client. The SVGs themselves are covered by the
	// "routeguide" case.
	if got, want := len(r.Charts), 2*2+4*2; got != want {
		t.Errorf("%d charts, want %d", got, want)
	}
}

func TestCompareGolden(t *testing.T) {
	c, err := Compare(readFiles(t, "compare_old.json"), readFiles(t, "compare_new.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "compare.md", []byte(c.Markdown()))
}
