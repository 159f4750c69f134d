package main

import (
	"bytes"
	"flag"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

// The programs of the A/A test, which Bazel passes (compare_aa_test).
var (
	loadgen    = flag.String("loadgen", "", "rlocation of //go/routeguide/loadgen")
	goServer   = flag.String("go_server", "", "rlocation of //go/routeguide/server")
	lispServer = flag.String("lisp_server", "", "rlocation of //lisp/routeguide:server")
)

// splitTurns turns one run that measured a server against itself (-impl a
// -rival_impl b) into the two runs --compare takes, with the scenarios
// named alike.
func splitTurns(t *testing.T, f *schema.File, dir string) (oldPath, newPath string) {
	t.Helper()
	halves := map[string]*schema.File{}
	for _, impl := range []string{"a", "b"} {
		halves[impl] = schema.NewFile(f.Suite, f.Environment)
	}
	for _, r := range f.Results {
		impl, rest, _ := strings.Cut(r.Scenario, "/")
		h, ok := halves[impl]
		if !ok {
			t.Fatalf("scenario %q of neither a nor b", r.Scenario)
		}
		r.Scenario = rest
		h.Results = append(h.Results, r)
	}
	oldPath, newPath = filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for path, h := range map[string]*schema.File{oldPath: halves["a"], newPath: halves["b"]} {
		if err := h.WriteFile(path); err != nil {
			t.Fatal(err)
		}
	}
	return oldPath, newPath
}

// TestCompareIdenticalCodeFindsNoRegression is the regression gate's A/A
// test: each server measured against itself, in turns, in one action, all
// four RPC kinds at 1 and 4 clients, 6 repetitions; comparing the two
// halves must find no regression, however many of the ~20 metrics per
// scenario differ "significantly" by chance.
func TestCompareIdenticalCodeFindsNoRegression(t *testing.T) {
	if *loadgen == "" {
		t.Skip("no -loadgen (run under bazel test)")
	}
	for name, server := range map[string]string{"go": *goServer, "lisp": *lispServer} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			results := filepath.Join(dir, "aa.json")
			path := runfile.Path(server)
			cmd := exec.Command(runfile.Path(*loadgen), "-server", path, "-impl", "a", "-rival", path, "-rival_impl", "b",
				"-clients", "1,4", "-duration", "200ms", "-reps", "6", "-warmup", "100ms", "-out", results)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("loadgen: %v\n%s", err, stderr.String())
			}
			f, err := schema.ReadFile(results)
			if err != nil {
				t.Fatal(err)
			}
			oldPath, newPath := splitTurns(t, f, dir)
			var stdout bytes.Buffer
			worse, err := runCompare(oldPath, newPath, 5, &stdout)
			if err != nil {
				t.Fatal(err)
			}
			if len(worse) != 0 {
				t.Errorf("identical code, regressions %v:\n%s", worse, stdout.String())
			}
			old, _ := schema.ReadFile(oldPath)
			cur, _ := schema.ReadFile(newPath)
			c, err := report.Compare([]*schema.File{old}, []*schema.File{cur})
			if err != nil {
				t.Fatal(err)
			}
			uncorrected, beyond := 0, 0
			for _, ch := range c.Changes {
				if ch.Verdict() == "worse" {
					uncorrected++
					if ch.WorsePercent() > 5 {
						beyond++
					}
				}
			}
			t.Logf("%d metrics compared; before the gate's selection and correction, %d 'significantly worse', "+
				"%d of them by more than 5%%; after, none", len(c.Changes), uncorrected, beyond)
		})
	}
}
