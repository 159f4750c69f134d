package cpuset

import (
	"slices"
	"testing"
)

// FuzzParse parses arbitrary CPU lists. What Parse accepts is a sorted set
// of distinct CPU numbers up to MaxCPU, which String writes as a list that
// parses back to the same set; and parsing ends, whatever range a list
// names. The seeds are testdata/fuzz/FuzzParse (TestFuzzSeeds).
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		set, err := Parse(s)
		if err != nil {
			if set != nil {
				t.Fatalf("Parse(%q) failed (%v) with a set %v", s, err, set)
			}
			return
		}
		if len(set) == 0 {
			t.Fatalf("Parse(%q) accepted an empty set", s)
		}
		for i, c := range set {
			if c < 0 || c > MaxCPU || i > 0 && c <= set[i-1] {
				t.Fatalf("Parse(%q) = %v: not distinct CPU numbers from 0 to %d in order", s, set, MaxCPU)
			}
		}
		again, err := Parse(set.String())
		if err != nil || !slices.Equal(again, set) {
			t.Fatalf("Parse(%q) = %v, written %q, parsed back as %v, %v", s, set, set.String(), again, err)
		}
		if again.String() != set.String() {
			t.Fatalf("%v is written %q, and again %q", set, set.String(), again.String())
		}
	})
}
