package harness

import (
	"testing"

	"github.com/grpcbench/grpcbench/internal/fuzzseed"
)

// TestFuzzSeeds keeps FuzzParseProcFiles's checked-in corpus: the files as
// Linux writes them, command names that look like the line's syntax, and
// counters no kernel writes.
func TestFuzzSeeds(t *testing.T) {
	stat := "cpu  10132153 290696 3084719 46828483 16683 0 25195 311 0 0\ncpu0 1393280 32966 572056 13343292 6130 0 17875 40 0 0\ncpu1 1335120 33411 541424 13442516 5315 0 1768 36 0 0\nintr 199292 0 9 0\n"
	pidStat := "4242 (my (weird) proc) S 1 4242 4242 0 -1 4194560 116 0 0 0 1234 567 0 0 20 0 1 0 1802 5885952 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	seeds := [][]any{
		{[]byte(stat), "bash", int64(1234), int64(567)},
		{[]byte(pidStat), "a) S 1 2 3 (b", int64(0), int64(0)},
		{[]byte(""), "", int64(-1), int64(922337203685477581)},
		{[]byte("cpu 1 2 3 4 5 6 7 -8\n"), "x\ny", int64(922337203685477580), int64(1)},
		{[]byte("4242 (x) S 1 1 1 0 -1 0 0 0 0 0 92233720368547758 5 0 0"), " ", int64(1), int64(-9223372036854775808)},
		{[]byte("cpu0\ncpu1\ncpu"), "cpu", int64(100), int64(100)},
	}
	fuzzseed.Check(t, "FuzzParseProcFiles", seeds...)
}
