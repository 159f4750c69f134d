package harness

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func finishFile(statuses ...schema.Status) *schema.File {
	file := schema.NewFile("suite", schema.Environment{CPUModel: "x", CPUCount: 1, Kernel: "Linux", GoVersion: "go", Platform: "linux_amd64", BuildConfig: "dev"})
	for i, s := range statuses {
		r := schema.Result{Scenario: string(rune('a' + i)), Status: s}
		if s == schema.StatusOK {
			r.Metrics = []schema.Metric{schema.NewMetric(schema.MetricOps, schema.UnitCount, schema.HigherIsBetter, []float64{1})}
		} else {
			r.Error = "server exited"
		}
		file.Results = append(file.Results, r)
	}
	return file
}

// Finish prints the summary before the report, writes -out, and maps the
// outcome to the exit code every suite returns.
func TestFinish(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.json")
	f := &Flags{Out: out, BuildConfig: "dev"}
	var stdout, log bytes.Buffer
	if code := f.Finish(&stdout, &log, finishFile(schema.StatusOK), "pkg", "SUMMARY"); code != ExitOK {
		t.Errorf("all ok: exit %d, log %q", code, log.String())
	}
	if !strings.HasPrefix(stdout.String(), "SUMMARY\n") || !strings.Contains(stdout.String(), "# Benchmark report") {
		t.Errorf("stdout %q: want the summary, then the report", stdout.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("-out not written: %v", err)
	}

	stdout.Reset()
	if code := f.Finish(&stdout, &log, finishFile(schema.StatusOK, schema.StatusError), "pkg", ""); code != ExitFailed {
		t.Errorf("a failed scenario: exit %d, want %d", code, ExitFailed)
	}
	if !strings.Contains(log.String(), "suite: b failed: server exited") {
		t.Errorf("log %q does not name the failed scenario", log.String())
	}

	f.Out = filepath.Join(t.TempDir(), "missing", "results.json")
	if code := f.Finish(&stdout, &log, finishFile(schema.StatusOK), "pkg", ""); code != ExitFailed {
		t.Errorf("unwritable -out: exit %d, want %d", code, ExitFailed)
	}
}

// The environment records when, with what binary and at what GOGC.
func TestEnvironmentProvenance(t *testing.T) {
	env := (&Flags{BuildConfig: "dev"}).Environment()
	if env.MeasuredAt == "" || env.Extra[schema.ExtraGOGC] == "" || len(env.Extra[schema.ExtraBinarySHA256]) != 64 {
		t.Errorf("environment %+v lacks its time, GOGC or binary digest", env)
	}
}
