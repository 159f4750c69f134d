// Package cpuset gives a benchmark's server and load generator disjoint
// sets of CPUs, so that what one process costs is not paid by the other
// and the figures of each side are its own.
package cpuset

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Set is a sorted list of distinct CPU numbers.
type Set []int

// Parse reads a CPU list as the kernel writes one (cpuset(7)):
// "0", "0-3", "0,2,4-5".
func Parse(s string) (Set, error) {
	var set Set
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number", s, lo)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return nil, fmt.Errorf("CPU list %q: %q is not a range", s, part)
			}
		}
		for c := first; c <= last; c++ {
			set = append(set, c)
		}
	}
	slices.Sort(set)
	if len(slices.Compact(set)) != len(set) {
		return nil, fmt.Errorf("CPU list %q names a CPU twice", s)
	}
	return set, nil
}

// String writes the set as a CPU list, ranges collapsed: "0-2,5".
func (s Set) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Overlaps reports whether the two sets share a CPU.
func (s Set) Overlaps(o Set) bool {
	for _, c := range s {
		if slices.Contains(o, c) {
			return true
		}
	}
	return false
}

// Split divides usable CPUs between a server and its load generator: the
// server gets the first half, rounded down, and the load generator the
// rest. With fewer than two CPUs there is nothing to divide, and ok is
// false.
func Split(usable Set) (server, client Set, ok bool) {
	if len(usable) < 2 {
		return nil, nil, false
	}
	n := len(usable) / 2
	return slices.Clone(usable[:n]), slices.Clone(usable[n:]), true
}
