package report

import (
	"fmt"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// CompareRefusal is Compare's answer when it cannot judge two runs: a
// change between results of different hosts, or of separate runs on one
// host, could be the machine's as much as the code's, so it gives no
// verdict at all rather than a gate that passes or fails by the weather.
// Compare judges only results measured in turns in one run (one build
// action): both revisions started by one load generator (-server and
// -rival), its results split by revision.
type CompareRefusal struct {
	Suite    string
	Reason   Refusal // DifferentHosts or SeparateActions
	Old, New string  // the host keys, or the run IDs, that differ
}

func (e *CompareRefusal) Error() string {
	what := "host keys"
	if e.Reason == SeparateActions {
		what = "runs"
	}
	return fmt.Sprintf("refused, no verdict: suite %s: old and new were %s (%s %s and %s); "+
		"compare judges only results measured in turns in one action on one host",
		e.Suite, e.Reason, what, orMissing(e.Old), orMissing(e.New))
}

// refuseComparison returns why the results of one suite, old and new, may
// not be compared, or nil: every file of both must come from one run on
// one host. A difference of hosts outranks one of runs.
func refuseComparison(suite string, old, new []schema.Environment) *CompareRefusal {
	var separate *CompareRefusal
	for _, o := range old {
		for _, n := range new {
			switch refusal(o, n) {
			case DifferentHosts:
				return &CompareRefusal{Suite: suite, Reason: DifferentHosts, Old: o.Host, New: n.Host}
			case SeparateActions:
				if separate == nil {
					separate = &CompareRefusal{Suite: suite, Reason: SeparateActions,
						Old: o.Extra[schema.ExtraRunID], New: n.Extra[schema.ExtraRunID]}
				}
			}
		}
	}
	return separate
}
