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
	for _, bad := range []string{"", "a", "-1", "3-1", "1,1", "0-"} {
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
