package main

import (
	"slices"
	"testing"
)

func TestRoundOrderRotates(t *testing.T) {
	for round, want := range [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 1, 2}} {
		if got := roundOrder(round, 3); !slices.Equal(got, want) {
			t.Errorf("round %d: order %v, want %v", round, got, want)
		}
	}
	if got := roundOrder(4, 1); !slices.Equal(got, []int{0}) {
		t.Errorf("one scenario: order %v", got)
	}
}
