package report

import (
	"slices"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// TestValuesOrderedWhateverTheRunOrder: a quota sweep measured in a random
// order, as its load generator records it (quotas as numbers, 0 uncapped;
// periods as durations, "none" uncapped), renders its groups in the same
// order every time; names keep the order the suite ran them in.
func TestValuesOrderedWhateverTheRunOrder(t *testing.T) {
	var d Dataset
	for _, p := range []map[string]any{
		{"rpc": "server_streaming", "server_cpu_quota": 1.0, "server_cpu_period": "100ms"},
		{"rpc": "unary", "server_cpu_quota": 0.0, "server_cpu_period": "none"},
		{"rpc": "unary", "server_cpu_quota": 0.25, "server_cpu_period": "10ms"},
	} {
		d.Rows = append(d.Rows, Row{Result: schema.Result{Parameters: p}})
	}
	for key, want := range map[string][]string{
		"server_cpu_quota":  {"0", "0.25", "1"},
		"server_cpu_period": {"10ms", "100ms", "none"},
		"rpc":               {"server_streaming", "unary"},
	} {
		if got := d.Values(key); !slices.Equal(got, want) {
			t.Errorf("Values(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestSortIfOrdered(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"100", "1", "10"}, []string{"1", "10", "100"}},
		{[]string{"none", "100ms", "10ms"}, []string{"10ms", "100ms", "none"}},
		{[]string{"none", "+Inf", "1"}, []string{"1", "+Inf", "none"}},
		{[]string{"+Inf", "none", "1"}, []string{"1", "+Inf", "none"}},
		{[]string{"1000ms", "1s", "10ms"}, []string{"10ms", "1000ms", "1s"}},
		{[]string{"1s", "1000ms", "10ms"}, []string{"10ms", "1000ms", "1s"}},
		{[]string{"none"}, []string{"none"}},
		// Not all numbers, nor all durations: left in the order given.
		{[]string{"gzip", "none"}, []string{"gzip", "none"}},
		{[]string{"10ms", "1"}, []string{"10ms", "1"}},
		{[]string{"unary", "bidi_streaming"}, []string{"unary", "bidi_streaming"}},
	} {
		got := slices.Clone(c.in)
		sortIfOrdered(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("sortIfOrdered(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
