package schema

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/grpcbench/grpcbench/internal/fuzzseed"
)

// TestFuzzSeeds keeps the checked-in corpora: for FuzzParse, the results
// files of testdata/valid and testdata/invalid; for FuzzParseProcInfo,
// /proc files of x86 and arm64 machines and counts no kernel writes.
func TestFuzzSeeds(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no results files in testdata: %v", err)
	}
	var seeds [][]any
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, []any{data})
	}
	fuzzseed.Check(t, "FuzzParse", seeds...)

	x86 := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\nflags\t\t: fpu vme\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n"
	arm := "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\n"
	meminfo := "MemTotal:       24683524 kB\nMemFree:        18063772 kB\n"
	fuzzseed.Check(t, "FuzzParseProcInfo",
		[]any{[]byte(x86), int64(24683524)},
		[]any{[]byte(arm), int64(0)},
		[]any{[]byte(meminfo), int64(-1)},
		[]any{[]byte("MemTotal: 9223372036854775807 kB\n"), int64(9007199254740992)},
		[]any{[]byte("model name :  a \t b  \nModel: c\n"), int64(9223372036854775807)},
	)
}
