package harness

import (
	"fmt"
	"strings"
	"testing"
)

func TestInTurns(t *testing.T) {
	var order []string
	InTurns(3, 4, func(c, round int) { order = append(order, fmt.Sprintf("%c%d", 'a'+c, round)) })
	// Williams's orders for three: abc, bca, cab, then their reverses.
	want := "a0 b0 c0 b1 c1 a1 c2 a2 b2 c3 b3 a3"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("turns %q, want %q", got, want)
	}
	// Two contestants alternate who goes first.
	order = nil
	InTurns(2, 4, func(c, round int) { order = append(order, fmt.Sprintf("%c%d", 'a'+c, round)) })
	if got, want := strings.Join(order, " "), "a0 b0 b1 a1 a2 b2 b3 a3"; got != want {
		t.Errorf("two: turns %q, want %q", got, want)
	}
	if got := TurnLabel("unary/ours", 1, 6); got != "unary/ours, round 2/6" {
		t.Errorf("label %q", got)
	}
}

// Over one cycle of the design every contestant takes every place equally
// often, and directly follows every other contestant equally often.
func TestWilliamsOrderIsBalanced(t *testing.T) {
	for n := 1; n <= 8; n++ {
		design := williamsOrder(n)
		if want := n + n%2*n; len(design) != want {
			t.Fatalf("n=%d: %d orders, want %d", n, len(design), want)
		}
		place := map[[2]int]int{} // (contestant, place) -> count
		follows := map[[2]int]int{}
		for _, order := range design {
			seen := map[int]bool{}
			for i, c := range order {
				if c < 0 || c >= n || seen[c] {
					t.Fatalf("n=%d: order %v is not a permutation", n, order)
				}
				seen[c] = true
				place[[2]int{c, i}]++
				if i > 0 {
					follows[[2]int{order[i-1], c}]++
				}
			}
		}
		for c := range n {
			for i := range n {
				if got, want := place[[2]int{c, i}], len(design)/n; got != want {
					t.Errorf("n=%d: contestant %d in place %d %d times, want %d", n, c, i, got, want)
				}
			}
			for d := range n {
				if c == d {
					continue
				}
				if got, want := follows[[2]int{c, d}], len(design)/n; got != want {
					t.Errorf("n=%d: %d right after %d %d times, want %d", n, d, c, got, want)
				}
			}
		}
	}
}

// With fewer rounds than a Williams design's cycle (seven contestants take
// fourteen orders), the rounds run are still no rotation: over any first
// rounds from three on, no contestant follows the same one in every round
// (over two, a pair can).
func TestWilliamsPrefixHasNoFixedPredecessor(t *testing.T) {
	for n := 3; n <= 8; n++ {
		design := williamsOrder(n)
		for rounds := 3; rounds <= len(design); rounds++ {
			for c := range n {
				// -1: the contestant went first in that round.
				preds := map[int]bool{}
				for _, order := range design[:rounds] {
					pred := -1
					for i, x := range order {
						if x == c && i > 0 {
							pred = order[i-1]
						}
					}
					preds[pred] = true
				}
				if len(preds) == 1 && !preds[-1] {
					first := -1
					for p := range preds {
						first = p
					}
					t.Errorf("n=%d, %d rounds: contestant %d follows %d in every round", n, rounds, c, first)
				}
			}
		}
	}
}
