package report

import (
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/internal/goldenfile"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// checkGolden compares got with testdata/golden/name (-update rewrites it).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, name, got)
}

func readFiles(t *testing.T, names ...string) []*schema.File {
	t.Helper()
	return goldenfile.ReadResults(t, names...)
}

func TestCompareGolden(t *testing.T) {
	c, err := Compare(readFiles(t, "compare_old.json"), readFiles(t, "compare_new.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "compare.md", []byte(c.Markdown()))
}
