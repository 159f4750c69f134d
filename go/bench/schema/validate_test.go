package schema

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the testdata/invalid/*.want golden files")

func TestValidateAcceptsValidFiles(t *testing.T) {
	for _, path := range validFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := Validate(data); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// Each invalid file has a golden .want file listing the problems Validate
// must report, one a line, so a change in wording or coverage is visible.
func TestValidateRejectsInvalidFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata/invalid files")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			err = Validate(data)
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Validate = %v, want a *ValidationError", err)
			}
			got := strings.Join(verr.Problems, "\n") + "\n"
			wantPath := strings.TrimSuffix(path, ".json") + ".want"
			if *update {
				if err := os.WriteFile(wantPath, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("problems differ from %s\ngot:\n%swant:\n%s", wantPath, got, want)
			}
		})
	}
}

func TestParseDecodes(t *testing.T) {
	f, err := ReadFile("testdata/valid/routeguide.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Suite != "routeguide" || len(f.Results) != 3 {
		t.Fatalf("suite %q with %d results", f.Suite, len(f.Results))
	}
	if f.Environment.SBCLVersion != "SBCL 2.4.0" || f.Environment.Revision != "3f2c1a9" {
		t.Errorf("environment = %+v", f.Environment)
	}
	r := f.Results[0]
	if got := r.Parameters["clients"]; got != float64(10) {
		t.Errorf("parameters.clients = %v (%T)", got, got)
	}
	m, ok := r.Metric("req_per_s")
	if !ok || m.Median != 30850 || m.Better != HigherIsBetter || len(m.Reps) != 3 {
		t.Errorf("req_per_s = %+v, %v", m, ok)
	}
	if f.Results[2].Status != StatusError || f.Results[2].Error == "" {
		t.Errorf("error scenario = %+v", f.Results[2])
	}
}

func TestNewMetricSummarizes(t *testing.T) {
	tests := []struct {
		reps             []float64
		min, median, max float64
	}{
		{[]float64{7}, 7, 7, 7},
		{[]float64{3, 1, 2}, 1, 2, 3},
		{[]float64{4, 1, 3, 2}, 1, 2.5, 4},
		{[]float64{5, 5, 1, 9, 5}, 1, 5, 9},
	}
	for _, tt := range tests {
		m := NewMetric("x", UnitCount, LowerIsBetter, tt.reps)
		if m.Min != tt.min || m.Median != tt.median || m.Max != tt.max {
			t.Errorf("NewMetric(%v) = min %g median %g max %g, want %g %g %g",
				tt.reps, m.Min, m.Median, m.Max, tt.min, tt.median, tt.max)
		}
	}
	reps := []float64{3, 1, 2}
	m := NewMetric("x", UnitCount, LowerIsBetter, reps)
	if reps[0] != 3 || m.Reps[0] != 3 {
		t.Errorf("NewMetric must keep reps in run order and not sort the caller's slice: %v %v", reps, m.Reps)
	}
}

func TestMarshalRefusesInvalidFile(t *testing.T) {
	f := NewFile("cri", Environment{CPUModel: "x", CPUCount: 1, Kernel: "Linux 6", GoVersion: "go1", Platform: "linux_amd64", BuildConfig: "opt"})
	if _, err := f.Marshal(); err == nil {
		t.Error("Marshal of a file without results succeeded")
	}
	f.Results = append(f.Results, Result{
		Scenario: "list", Status: StatusOK,
		Parameters: map[string]any{"n": 100},
		Metrics:    []Metric{NewMetric("wall_time", UnitSeconds, LowerIsBetter, []float64{3.5, 3.4})},
	})
	data, err := f.Marshal()
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(Marshal()): %v", err)
	}
	if back.Results[0].Metrics[0].Median != 3.45 {
		t.Errorf("round trip median = %g", back.Results[0].Metrics[0].Median)
	}
}
