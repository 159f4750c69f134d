package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/internal/runfile"
)

// The results of two separate build actions that ran the same binaries with
// the same parameters, which Bazel passes (compare_two_actions_test).
var (
	firstAction  = flag.String("first_action", "", "rlocation `paths` of the first action's results (:aa_first_action_results)")
	secondAction = flag.String("second_action", "", "rlocation `paths` of the second action's results (:aa_second_action_results)")
)

// resultsJSON is the results file among a benchmark target's outputs.
func resultsJSON(t *testing.T, rlocations string) string {
	t.Helper()
	for _, r := range strings.Fields(rlocations) {
		if strings.HasSuffix(r, ".json") {
			return runfile.Path(r)
		}
	}
	t.Fatalf("no .json among %q", rlocations)
	return ""
}

// TestCompareRefusesTwoActions is the A/A test across actions: the same
// server measured by the same load generator in two separate build
// actions, on this host. Identical code, and still compare must give no
// verdict, neither a pass nor a regression: between two runs the machine
// changes too, and the results cannot tell which did. It refuses them with
// the status of separate actions, not that of different hosts.
func TestCompareRefusesTwoActions(t *testing.T) {
	if *firstAction == "" || *secondAction == "" {
		t.Skip("no -first_action and -second_action (run under bazel test)")
	}
	first, second := resultsJSON(t, *firstAction), resultsJSON(t, *secondAction)
	var stdout, stderr bytes.Buffer
	if status := run([]string{"--compare", first, second}, &stdout, &stderr); status != exitSeparateActions {
		t.Errorf("status %d, want %d (separate actions); stdout:\n%s\nstderr:\n%s", status, exitSeparateActions, stdout.String(), stderr.String())
	}
	if want := "refused, no verdict: suite routeguide: old and new were measured in separate actions"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("a comparison printed despite the refusal:\n%s", stdout.String())
	}
	t.Logf("compare of two actions: %s", strings.TrimSpace(stderr.String()))
}
