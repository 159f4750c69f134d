package cgroup

import (
	"testing"

	"github.com/grpcbench/grpcbench/internal/fuzzseed"
)

// TestFuzzSeeds keeps FuzzParseStat's checked-in corpus: cpu.stat and
// cpu.pressure as cgroup v1 and v2 write them, and counters no kernel
// writes.
func TestFuzzSeeds(t *testing.T) {
	var seeds [][]any
	for _, data := range []string{
		"usage_usec 8419350\nuser_usec 5632521\nsystem_usec 2786829\nnr_periods 1200\nnr_throttled 37\nthrottled_usec 912345\nnr_bursts 0\nburst_usec 0\n",
		"nr_periods 7\nnr_throttled 2\nthrottled_time 1000\n",
		"some avg10=0.00 avg60=0.12 avg300=0.05 total=3457443044\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"",
		"user_usec 9223372036854775807\nsystem_usec -1\n",
		"nr_periods -1\nnr_throttled 1\nthrottled_time -5\n",
		"some total=9223372036854775807\n",
		"some total=-1\n",
		"  user_usec\t1\r\nsystem_usec  2\n",
	} {
		seeds = append(seeds, []any{data, int64(1000), int64(2000), int64(3000)})
	}
	seeds = append(seeds, []any{"", int64(-1), int64(1 << 62), int64(9223372036854775807)})
	fuzzseed.Check(t, "FuzzParseStat", seeds...)
}
