package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// staleDoc writes a document in a "perf" workspace directory whose one part
// shows an artifact that measured a server of the given digest, and a
// server binary: it returns the document, the artifact's workspace path and
// the -servers flag.
func staleDoc(t *testing.T, digest func(current string) string) (doc, artifact, servers string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "server")
	if err := os.WriteFile(bin, []byte("the server, today"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := schema.ReadFile("../../suites/testdata/routeguide_go.json")
	if err != nil {
		t.Fatal(err)
	}
	f.Environment.Extra = map[string]string{schema.ExtraServer: "go server", schema.ExtraServerSHA256: digest(schema.FileSHA256(bin))}
	if err := os.MkdirAll(filepath.Join(dir, "perf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile(filepath.Join(dir, "perf", "results.json")); err != nil {
		t.Fatal(err)
	}
	doc = filepath.Join(dir, "DOC.md")
	body := "# Doc\n\n<!-- benchreport: perf/results.json, section: Throughput -->\n<!-- /benchreport -->\n"
	if err := os.WriteFile(doc, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-fix", doc}, &stdout, &stderr); code != 0 {
		t.Fatalf("-fix: exit %d: %s", code, stderr.String())
	}
	return doc, filepath.Join(dir, "perf", "results.json"), "go=" + bin
}

// A document that matches its artifact still fails when the artifact
// measured a server the build no longer makes, naming the artifact; listed
// as awaiting re-measurement it passes, with the commands that measure it
// again; listed while current, it fails, so that the list cannot outlive
// the staleness.
func TestStaleArtifacts(t *testing.T) {
	old := func(string) string { return strings.Repeat("0", 64) }
	doc, artifact, servers := staleDoc(t, old)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-servers", servers, doc}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), artifact+" is stale: it measured go server 000000000000 (server_sha256), which the current build no longer makes") {
		t.Errorf("stale artifact: exit %d, stderr:\n%s", code, stderr.String())
	}
	t.Logf("stale artifact, not awaiting re-measurement:\n%s", stderr.String())

	stdout.Reset()
	stderr.Reset()
	wait := "perf/results.json=//bench/routeguide:quick_go_and_lisp_servers_go_client_results"
	if code := run([]string{"-servers", servers, "-awaiting", wait, doc}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "STALE, awaiting re-measurement: "+artifact+" is stale") ||
		!strings.Contains(stdout.String(), "re-measure: tools/bazel build //bench/routeguide:quick_go_and_lisp_servers_go_client_results && "+
			"install -m 644 bazel-bin/bench/routeguide/quick_go_and_lisp_servers_go_client_results.json perf/results.json && "+
			"tools/bazel run //go/bench/cmd/docsync -- -fix "+doc) {
		t.Errorf("awaiting: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}

	current := func(d string) string { return d }
	doc, _, servers = staleDoc(t, current)
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"-servers", servers, doc}, &stdout, &stderr); code != 0 {
		t.Errorf("current artifact: exit %d, stderr:\n%s", code, stderr.String())
	}
	if code := run([]string{"-servers", servers, "-awaiting", wait, doc}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "perf/results.json is current: take it off the list") {
		t.Errorf("current artifact listed: exit %d, stderr:\n%s", code, stderr.String())
	}
}
