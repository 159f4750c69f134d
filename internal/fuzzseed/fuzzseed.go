// Package fuzzseed keeps a fuzz target's checked-in seed corpus in step
// with the seeds a test generates: each seed is a file of Go's corpus
// format ("go test fuzz v1") in testdata/fuzz/FuzzXxx, named by its hash
// as `go test -fuzz` names the inputs it finds.
package fuzzseed

import (
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteEnv, set to 1, makes Check write the seeds it would report
// missing: `GRPCBENCH_WRITE_FUZZ_SEEDS=1 go test -run TestFuzzSeeds` in
// the package's directory.
const WriteEnv = "GRPCBENCH_WRITE_FUZZ_SEEDS"

// Check requires that testdata/fuzz/TARGET (relative to the test's
// directory) holds a file for every seed, each seed being the fuzz
// function's arguments after its *testing.T.
func Check(t *testing.T, target string, seeds ...[]any) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	write := os.Getenv(WriteEnv) == "1"
	for _, seed := range seeds {
		data, err := Encode(seed...)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, Name(data))
		got, err := os.ReadFile(path)
		switch {
		case err == nil && string(got) == string(data):
			continue
		case write:
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("seed %s is missing; run %s=1 go test -run %s in the package's directory", path, WriteEnv, t.Name())
		}
	}
}

// Name is the file name `go test -fuzz` gives an input: the first 16 hex
// digits of its encoding's SHA-256.
func Name(data []byte) string {
	return fmt.Sprintf("%x", sha256.Sum256(data))[:16]
}

// Encode writes values in Go's corpus format, one line each.
func Encode(values ...any) ([]byte, error) {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, v := range values {
		switch v := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case string:
			fmt.Fprintf(&b, "string(%q)\n", v)
		case int, int64, int32, uint64, uint32, uint16, bool:
			fmt.Fprintf(&b, "%T(%v)\n", v, v)
		case float64:
			// %v would lose a NaN's payload; Go's corpus format
			// writes its bits.
			if math.IsNaN(v) {
				fmt.Fprintf(&b, "math.Float64frombits(0x%x)\n", math.Float64bits(v))
			} else {
				fmt.Fprintf(&b, "float64(%v)\n", v)
			}
		default:
			return nil, fmt.Errorf("fuzzseed: cannot encode a %T", v)
		}
	}
	return []byte(b.String()), nil
}
