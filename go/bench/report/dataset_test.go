package report

import (
	"slices"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// TestValuesOrderedWhateverTheRunOrder: a sweep measured in a random order
// renders its quotas and periods in the same order every time, the
// uncapped point last; names keep the order the suite ran them in.
func TestValuesOrderedWhateverTheRunOrder(t *testing.T) {
	var d Dataset
	for _, p := range []map[string]any{
		{"rpc": "server_streaming", "server_cpu_quota": "1", "server_cpu_period": "100ms", "clients": 100},
		{"rpc": "unary", "server_cpu_quota": "none", "server_cpu_period": "none", "clients": 10},
		{"rpc": "unary", "server_cpu_quota": "0.25", "server_cpu_period": "10ms", "clients": 1},
	} {
		d.Rows = append(d.Rows, Row{Result: schema.Result{Parameters: p}})
	}
	for key, want := range map[string][]string{
		"server_cpu_quota":  {"0.25", "1", "none"},
		"server_cpu_period": {"10ms", "100ms", "none"},
		"clients":           {"1", "10", "100"},
		"rpc":               {"server_streaming", "unary"},
	} {
		if got := d.Values(key); !slices.Equal(got, want) {
			t.Errorf("Values(%q) = %v, want %v", key, got, want)
		}
	}
}
