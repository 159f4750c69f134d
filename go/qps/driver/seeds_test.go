package driver

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/grpcbench/grpcbench/internal/fuzzseed"
)

// TestFuzzSeeds keeps the checked-in corpora: for FuzzParseScenarios, a
// scenario as gRPC's generator writes it, a lone one as test-infra's
// LoadTests carry it, JSON spellings of fields, and files to refuse; for
// FuzzHistogram, gRPC's default parameters, coarse and refused ones, and
// latencies within, at and beyond their range.
func TestFuzzSeeds(t *testing.T) {
	var seeds [][]any
	for _, s := range []string{
		unaryPingPong,
		`{"scenarios": {"name": "one", "num_servers": 1, "client_config": {"channel_args": [{"name": "grpc.optimization_target", "str_value": "latency"}]}}}`,
		`{"scenarios": [{"name": "a", "numServers": 1, "warmupSeconds": 5}, {"name": "b", "benchmarkSeconds": 1}]}`,
		`{"scenarios": [{"name": "x", "benchmark_secnds": 3}]}`,
		`{"scenarios": []}`,
		`{"scenarios": {}}`,
		`{"scenarios": {"name": "a"}, "scenarios": [{"name": "b"}]}`,
		`{"scenarios": [{"name": "a"}], "scenarios": {"name": "b"}}`,
		`{"scenarios": {"name": "<&>\u00e9"}}`,
		`not json`,
	} {
		seeds = append(seeds, []any{[]byte(s)})
	}
	fuzzseed.Check(t, "FuzzParseScenarios", seeds...)

	latencies := func(xs ...float64) []byte {
		var b []byte
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	fuzzseed.Check(t, "FuzzHistogram",
		[]any{0.01, 60e9, latencies(1, 2, 99, 100, 101, 12_345, 50_000, 1e6, 59e9), []byte{}},
		[]any{0.0, 0.0, latencies(250_000, 250_000, 260_000), []byte{1, 0, 0, 0, 2, 0, 0, 0}},
		[]any{0.5, 1e3, latencies(0, 0.5, 1, 999, 1e3, 1e4), []byte{0xff, 0xff, 0xff, 0xff}},
		[]any{1e-9, 60e9, latencies(1), []byte{}},
		[]any{-1.0, math.NaN(), latencies(math.NaN(), math.Inf(1)), []byte{}},
	)
}
