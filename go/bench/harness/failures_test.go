package harness

import (
	"bytes"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func TestScenarioFailures(t *testing.T) {
	file := schema.NewFile("suite", schema.Environment{})
	file.Results = []schema.Result{
		{Scenario: "a", Status: schema.StatusOK},
		{Scenario: "b", Status: schema.StatusError, Error: "server exited"},
		{Scenario: "c", Status: schema.StatusError, Error: "timed out"},
	}
	var out bytes.Buffer
	if n := ScenarioFailures(&out, file); n != 2 {
		t.Errorf("%d failures, want 2", n)
	}
	if want := "suite: b failed: server exited\nsuite: c failed: timed out\n"; out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
	file.Results = file.Results[:1]
	out.Reset()
	if n := ScenarioFailures(&out, file); n != 0 || out.Len() != 0 {
		t.Errorf("all ok: %d failures, wrote %q", n, out.String())
	}
}
