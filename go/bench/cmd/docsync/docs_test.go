package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/internal/runfile"
)

// docs are the repository's documents with generated parts (rlocation
// paths, with their artifacts beside them in the runfiles), given by the
// BUILD file.
var docs = flag.String("docs", "", "space-separated rlocation `paths` of the documents to check")

// The documents show what their checked-in artifacts render today: a figure
// edited by hand, an artifact replaced without regenerating its document,
// or a report change that renders differently, fails here.
func TestDocumentsMatchTheirArtifacts(t *testing.T) {
	if *docs == "" {
		t.Skip("no -docs given (run by Bazel: //go/bench/cmd/docsync:docs_test)")
	}
	var paths []string
	for _, d := range strings.Fields(*docs) {
		paths = append(paths, runfile.Path(d))
	}
	var stdout, stderr bytes.Buffer
	if code := run(paths, &stdout, &stderr); code != 0 {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
}

// A bad flag, or no document, is a usage error.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"-nope"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: docsync") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}
