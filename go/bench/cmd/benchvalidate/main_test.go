package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    []string
		wantErr    []string
	}{
		{"valid", []string{"testdata/valid.json"}, 0, []string{"ok   testdata/valid.json (suite cri, 1 scenarios)"}, nil},
		{"invalid lists every problem", []string{"testdata/valid.json", "testdata/invalid.json"}, 1,
			[]string{"ok   testdata/valid.json"},
			[]string{"FAIL testdata/invalid.json: invalid results file:", "metrics[0].median: 2.5 does not match reps", "metrics[2].reps: has 2 values"}},
		{"missing file", []string{"testdata/nope.json"}, 1, nil, []string{"FAIL", "nope.json"}},
		{"no arguments", nil, 2, nil, []string{"no files given", "usage: benchvalidate"}},
		{"bad flag", []string{"-x", "testdata/valid.json"}, 2, nil, []string{"flag provided but not defined", "usage: benchvalidate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(tt.args, &stdout, &stderr); got != tt.wantStatus {
				t.Errorf("status %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.wantStatus, stdout.String(), stderr.String())
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// -rewrite leaves a valid file in the canonical form, with the same results.
func TestRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "valid.json")
	data, err := os.ReadFile("testdata/valid.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if got := run([]string{"-rewrite", path}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d\n%s", got, stderr.String())
	}
	before, err := schema.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := before.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, want) {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", got, want)
	}
}
