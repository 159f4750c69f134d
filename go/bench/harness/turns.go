package harness

import "fmt"

// InTurns measures several contestants (servers, channels, methods) of one
// scenario a repetition at a time: reps rounds, in each of which every
// contestant takes one turn, calling turn(contestant, round). The first
// turn rotates from round to round. On a shared machine the background load
// and the heap's state drift during a run; taking turns spreads that drift
// over all contestants instead of charging it to whichever ran last, and
// the rotation cancels any advantage of going first or after a given rival.
func InTurns(contestants, reps int, turn func(contestant, round int)) {
	for round := range reps {
		for i := range contestants {
			turn((i+round)%contestants, round)
		}
	}
}

// TurnLabel names a turn in progress lines and errors, e.g.
// "unary/ours, round 2/6".
func TurnLabel(scenario string, round, reps int) string {
	return fmt.Sprintf("%s, round %d/%d", scenario, round+1, reps)
}
