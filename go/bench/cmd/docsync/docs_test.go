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
// BUILD file; servers are the server binaries the current build makes, and
// awaiting the artifacts known to be stale.
var (
	docs            = flag.String("docs", "", "space-separated rlocation `paths` of the documents to check")
	servers         = flag.String("servers", "", "space-separated `NAME=RLOCATION`s of the current server binaries")
	awaitingFlag    = flag.String("awaiting", "", "docsync's -awaiting: space-separated `ARTIFACT=TARGET`s")
	variantArgsFlag = flag.String("variant_args", "", "docsync's -variant_args: `SUITE:LABEL=ARGS` pairs separated by semicolons")
)

// The documents show what their checked-in artifacts render today: a figure
// edited by hand, an artifact replaced without regenerating its document,
// or a report change that renders differently, fails here. With -servers,
// so does an artifact whose servers the current build no longer makes,
// unless it is awaiting re-measurement (then the log says how).
func TestDocumentsMatchTheirArtifacts(t *testing.T) {
	if *docs == "" {
		t.Skip("no -docs given (run by Bazel: //go/bench/cmd/docsync:docs_test)")
	}
	var args []string
	if *servers != "" {
		var named []string
		for _, s := range strings.Fields(*servers) {
			name, rlocation, _ := strings.Cut(s, "=")
			named = append(named, name+"="+runfile.Path(rlocation))
		}
		args = append(args, "-servers", strings.Join(named, " "), "-variant_args", *variantArgsFlag, "-awaiting", *awaitingFlag)
	}
	for _, d := range strings.Fields(*docs) {
		args = append(args, runfile.Path(d))
	}
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	if stdout.Len() > 0 {
		t.Logf("%s", stdout.String())
	}
	if code != 0 {
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
