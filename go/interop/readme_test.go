package interop_test

import (
	"flag"
	"os"
	"testing"

	"github.com/grpcbench/grpcbench/go/internal/runfile"
)

var readme = flag.String("readme", "", "rlocation of lisp/clgrpc/README.md, which records what these tests measure")

func readReadme(t *testing.T) string {
	t.Helper()
	if *readme == "" {
		t.Fatal("-readme is required")
	}
	data, err := os.ReadFile(runfile.Path(*readme))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
