package cpuset

import (
	"testing"

	"github.com/grpcbench/grpcbench/internal/fuzzseed"
)

// TestFuzzSeeds keeps FuzzParse's checked-in corpus: lists as the kernel
// and the -cpus flag write them, and malformed ones.
func TestFuzzSeeds(t *testing.T) {
	var seeds [][]any
	for _, s := range []string{
		"0", "0-3", "0,2,4-5", "5,0,2-3", "0-1023", "1023", "8191", "8192",
		"", ",", "-", "0-", "-1", "3-1", "1,1", "0-3,2", "+1", "0x1", " 0", "0-2-4",
		"9223372036854775807", "0-9223372036854775807",
	} {
		seeds = append(seeds, []any{s})
	}
	fuzzseed.Check(t, "FuzzParse", seeds...)
}
