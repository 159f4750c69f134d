package cgroup

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A sweep is every capped quota at every period, and one uncapped point,
// in the order given.
func TestParseSweep(t *testing.T) {
	points, err := ParseSweep([]string{"0.25", "1", "0"}, []string{"10ms", "100ms"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Quota{{0.25, 10 * time.Millisecond}, {0.25, 100 * time.Millisecond},
		{1, 10 * time.Millisecond}, {1, 100 * time.Millisecond}, {}}
	if !slices.Equal(points, want) {
		t.Fatalf("points %v, want %v", points, want)
	}
	var labels []string
	for _, q := range points {
		labels = append(labels, q.PeriodLabel())
	}
	if want := []string{"10ms", "100ms", "10ms", "100ms", "none"}; !slices.Equal(labels, want) {
		t.Errorf("period labels %q, want %q", labels, want)
	}
	if got, want := DescribeSweep(points[3:]), "1 cores (a CFS quota per 100ms period); none"; got != want {
		t.Errorf("described %q, want %q", got, want)
	}
}

// Every bad item is refused, naming the flag it came from.
func TestParseSweepRefuses(t *testing.T) {
	for _, tc := range []struct {
		quotas, periods []string
		want            string
	}{
		{[]string{"x"}, []string{"10ms"}, "-server_cpu_quota \"x\""},
		{[]string{"-1"}, []string{"10ms"}, "-server_cpu_quota must be"},
		{[]string{"65"}, []string{"10ms"}, "-server_cpu_quota must be"},
		{[]string{"0.5", "0.5"}, []string{"10ms"}, "given twice"},
		{[]string{"0.0005"}, []string{"10ms"}, "below the kernel's"},
		{[]string{"0.5"}, []string{"soon"}, "-server_cpu_period \"soon\""},
		{[]string{"0.5"}, []string{"2s"}, "the kernel accepts"},
		{[]string{"0.5"}, []string{"10ms", "10ms"}, "given twice"},
	} {
		if _, err := ParseSweep(tc.quotas, tc.periods); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v at %v: %v, want an error with %q", tc.quotas, tc.periods, err, tc.want)
		}
	}
}
