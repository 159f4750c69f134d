package harness

import (
	"fmt"
	"strings"
	"testing"
)

func TestInTurns(t *testing.T) {
	var order []string
	InTurns(3, 4, func(c, round int) { order = append(order, fmt.Sprintf("%c%d", 'a'+c, round)) })
	want := "a0 b0 c0 b1 c1 a1 c2 a2 b2 a3 b3 c3"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("turns %q, want %q", got, want)
	}
	if got := TurnLabel("unary/ours", 1, 6); got != "unary/ours, round 2/6" {
		t.Errorf("label %q", got)
	}
}
