package schema

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse validates arbitrary bytes as a results file. A file it
// accepts, Marshal writes again (Marshal validates what it writes), and
// that parses back to the same file. The seeds are testdata/fuzz/FuzzParse
// (TestFuzzSeeds): the valid and invalid files of testdata.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			if file != nil {
				t.Fatalf("Parse failed (%v) with a file", err)
			}
			if _, ok := err.(*ValidationError); !ok {
				t.Fatalf("Parse failed with a %T, not a *ValidationError: %v", err, err)
			}
			return
		}
		again, err := file.Marshal()
		if err != nil {
			t.Fatalf("Parse accepted %q, Marshal refuses it: %v", data, err)
		}
		back, err := Parse(again)
		if err != nil {
			t.Fatalf("Parse accepted %q, and not its re-encoding %q: %v", data, again, err)
		}
		if !reflect.DeepEqual(back, file) {
			t.Fatalf("%q parsed as\n%+v\nits re-encoding as\n%+v", data, file, back)
		}
	})
}

// FuzzParseProcInfo reads arbitrary bytes as /proc/cpuinfo and
// /proc/meminfo, then with a MemTotal line prepended. The CPU model is one
// line with single spaces; the memory a whole number of KiB that a
// kernel's line gives exactly, and never negative. The seeds are
// testdata/fuzz/FuzzParseProcInfo (TestFuzzSeeds).
func FuzzParseProcInfo(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, kb int64) {
		model := parseCPUModel(bytes.NewReader(data))
		if model != strings.Join(strings.Fields(model), " ") {
			t.Fatalf("CPU model %q is not one line of single spaces", model)
		}
		if mem := parseMemTotal(bytes.NewReader(data)); mem < 0 || mem%1024 != 0 {
			t.Fatalf("MemTotal of %q is %d bytes", data, mem)
		}
		meminfo := append(fmt.Appendf(nil, "MemTotal:       %d kB\n", kb), data...)
		want := kb * 1024
		if kb < 0 || kb > math.MaxInt64/1024 {
			want = 0
		}
		if mem := parseMemTotal(bytes.NewReader(meminfo)); mem != want {
			t.Fatalf("MemTotal of %q is %d bytes, want %d", meminfo, mem, want)
		}
	})
}
