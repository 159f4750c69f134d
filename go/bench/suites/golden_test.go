package suites_test

import (
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/internal/goldenfile"
	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	// Every suite's layout, as the report programs link them.
	_ "github.com/grpcbench/grpcbench/go/bench/suites"
)

func readFiles(t *testing.T, names ...string) []*schema.File {
	t.Helper()
	return goldenfile.ReadResults(t, names...)
}

// Reports of real results of the suites, rendered with their registered
// layouts; "unknown" is a suite nobody registered, rendered with
// report.DefaultLayout.
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
			r, err := report.Render(readFiles(t, tt.inputs...), report.Options{Charts: true})
			if err != nil {
				t.Fatal(err)
			}
			goldenfile.Check(t, tt.name+".md", []byte(r.Markdown))
			for _, c := range r.Charts {
				goldenfile.Check(t, c.Name, c.SVG)
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
	r, err := report.Render(readFiles(t, inputs...), report.Options{Charts: true})
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "routeguide_matrix.md", []byte(r.Markdown))
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

// cri-bench's own results (two runs, 32 and 1024 containers, trimmed to
// the layout's metrics): list, stream and two chunk sizes, so that "Stream
// vs List (all configurations)" has four columns. Only the Markdown is
// checked: the charts have the names of the "cri" case's, which covers them.
func TestRenderCRIChunkedGolden(t *testing.T) {
	r, err := report.Render(readFiles(t, "cri_chunked_32.json", "cri_chunked_1024.json"), report.Options{Charts: true})
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "cri_chunked.md", []byte(r.Markdown))
}
