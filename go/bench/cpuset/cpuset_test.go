package cpuset

import (
	"slices"
	"testing"
)

func TestParseAndString(t *testing.T) {
	for _, c := range []struct {
		in, out string
		set     Set
	}{
		{"0", "0", Set{0}},
		{"0-3", "0-3", Set{0, 1, 2, 3}},
		{"5,0,2-3", "0,2-3,5", Set{0, 2, 3, 5}},
	} {
		s, err := Parse(c.in)
		if err != nil || !slices.Equal(s, c.set) || s.String() != c.out {
			t.Errorf("Parse(%q) = %v (%q), %v; want %v (%q)", c.in, s, s.String(), err, c.set, c.out)
		}
	}
	for _, bad := range []string{"", "a", "-1", "3-1", "1,1", "0-", "8192", "0-8192", "0-9223372036854775807"} {
		if s, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", bad, s)
		}
	}
}

func TestSplit(t *testing.T) {
	if _, _, ok := Split(Set{0}); ok {
		t.Error("one CPU was split")
	}
	server, client, ok := Split(Set{0, 1})
	if !ok || !slices.Equal(server, Set{0}) || !slices.Equal(client, Set{1}) {
		t.Errorf("Split(0-1) = %v, %v, %v", server, client, ok)
	}
	server, client, _ = Split(Set{0, 1, 2, 3, 4})
	if !slices.Equal(server, Set{0, 1}) || !slices.Equal(client, Set{2, 3, 4}) || server.Overlaps(client) {
		t.Errorf("Split(0-4) = %v, %v", server, client)
	}
}

// SMT siblings stay together: on two cores of two threads each, numbered
// the way Linux numbers them (0 and 2 on core 0, 1 and 3 on core 1), each
// side gets a whole core, not a thread of each.
func TestSplitKeepsSiblingsTogether(t *testing.T) {
	smt := func(cpu int) (core, bool) { return core{0, cpu % 2}, true }
	server, client, ok := splitByCore(Set{0, 1, 2, 3}, smt)
	if !ok || !slices.Equal(server, Set{0, 2}) || !slices.Equal(client, Set{1, 3}) {
		t.Errorf("split = %v, %v, %v", server, client, ok)
	}
	// Three cores: the server one, the load generator two.
	three := func(cpu int) (core, bool) { return core{0, cpu % 3}, true }
	server, client, _ = splitByCore(Set{0, 1, 2, 3, 4, 5}, three)
	if !slices.Equal(server, Set{0, 3}) || !slices.Equal(client, Set{1, 2, 4, 5}) {
		t.Errorf("three cores: %v, %v", server, client)
	}
	// All on one core: its threads are split.
	one := func(int) (core, bool) { return core{0, 0}, true }
	server, client, _ = splitByCore(Set{0, 1}, one)
	if !slices.Equal(server, Set{0}) || !slices.Equal(client, Set{1}) {
		t.Errorf("one core: %v, %v", server, client)
	}
	// Unknown topology: each CPU a core.
	unknown := func(int) (core, bool) { return core{}, false }
	server, client, _ = splitByCore(Set{0, 1, 2}, unknown)
	if !slices.Equal(server, Set{0}) || !slices.Equal(client, Set{1, 2}) {
		t.Errorf("unknown: %v, %v", server, client)
	}
}
