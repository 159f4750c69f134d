package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
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
	logGateAcrossActions(t, first, second)
}

// logGateAcrossActions logs what the regression gate would have said of the
// two actions had it judged them, the second's results taken for the
// first run's: one draw of the A/A false alarms across actions that the refusal
// avoids. Identical code, so every regression it gates is a false alarm.
// Logged, not asserted: it measures the machine between two actions.
func logGateAcrossActions(t *testing.T, first, second string) {
	t.Helper()
	old, err := schema.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	renamed, err := schema.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	renamed.Environment.Extra[schema.ExtraRunID] = old.Environment.Extra[schema.ExtraRunID]
	cmp, err := report.Compare([]*schema.File{old}, []*schema.File{renamed})
	if err != nil {
		t.Fatalf("judged as one run: %v", err)
	}
	primary, significant := 0, 0
	for _, c := range cmp.Changes {
		if c.Primary {
			primary++
			if c.Significant() {
				significant++
			}
		}
	}
	if primary == 0 {
		t.Fatal("judged as one run: no primary metric in both actions")
	}
	t.Logf("judged as one run, identical code in two actions: %d of %d primary metrics changed "+
		"significantly before the correction, %d gated, %d of them regressions past 5%%",
		significant, primary, gated(cmp), len(cmp.Regressions(5)))
}

// gated counts the changes a comparison gates on.
func gated(cmp *report.Comparison) int {
	n := 0
	for _, c := range cmp.Changes {
		if c.Gated {
			n++
		}
	}
	return n
}
