package driver

import (
	"testing"

	"github.com/grpcbench/grpcbench/internal/fuzzseed"
)

// TestFuzzSeeds keeps FuzzParseScenarios's checked-in corpus: a scenario
// as gRPC's generator writes it, a lone one as test-infra's LoadTests
// carry it, JSON spellings of fields, and files to refuse.
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
}
