package harness

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Shuffle puts s in a random order drawn from seed (0: a seed from the
// clock), and returns the seed used, for the results to record. Cells that
// grow a server (connection counts) in a fixed order would each start from
// the heap the previous, smaller one left behind, and a sweep's points
// (CPU caps) would each run at the same moment of every run; shuffled,
// neither happens.
func Shuffle[T any](s []T, seed int64) int64 {
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return seed
}

// InTurns measures several contestants (servers, channels, methods) of one
// scenario a repetition at a time: reps rounds, in each of which every
// contestant takes one turn, calling turn(contestant, round). On a shared
// machine the background load and the heap's state drift during a run;
// taking turns spreads that drift over all contestants instead of charging
// it to whichever ran last. The order of each round follows a Williams
// design (see williamsOrder): over a cycle of rounds every contestant takes
// every place equally often and follows every other one equally often, so
// that no contestant always runs right after the one it is judged against
// (with a cyclic rotation, contestant j follows j-1 in all rounds but one).
func InTurns(contestants, reps int, turn func(contestant, round int)) {
	design := williamsOrder(contestants)
	for round := range reps {
		for _, c := range design[round%len(design)] {
			turn(c, round)
		}
	}
}

// williamsOrder is a Williams design for n contestants: n orders for an
// even n, 2n for an odd n (each order and its reverse), in which each
// contestant takes each place equally often and directly follows each other
// contestant equally often. The first order interleaves from both ends (0,
// 1, n-1, 2, n-2, ...); order r adds r to each place, modulo n.
func williamsOrder(n int) [][]int {
	if n <= 0 {
		return [][]int{{}}
	}
	first := make([]int, n)
	for i, lo, hi := 0, 0, n-1; i < n; i++ {
		// Places 0, 2, 4, ... count up from 0; places 1, 3, 5, ... count up from 1 and down from n-1
		// in turn: 0, 1, n-1, 2, n-2, ...
		switch {
		case i == 0:
			first[i] = 0
		case i%2 == 1:
			lo++
			first[i] = lo
		default:
			first[i] = hi
			hi--
		}
	}
	var design [][]int
	for r := range n {
		order := make([]int, n)
		for i, c := range first {
			order[i] = (c + r) % n
		}
		design = append(design, order)
	}
	if n%2 == 1 {
		for r := range n {
			order := make([]int, n)
			for i := range n {
				order[i] = design[r][n-1-i]
			}
			design = append(design, order)
		}
	}
	return design
}

// TurnLabel names a turn in progress lines and errors, e.g.
// "unary/ours, round 2/6".
func TurnLabel(scenario string, round, reps int) string {
	return fmt.Sprintf("%s, round %d/%d", scenario, round+1, reps)
}
