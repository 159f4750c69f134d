package docsync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// writeArtifact writes a results file that records the given server
// digests in its environment's extra, as the load generators do.
func writeArtifact(t *testing.T, dir string, extra map[string]string) string {
	t.Helper()
	f := schema.NewFile("routeguide", schema.Environment{CPUModel: "cpu", CPUCount: 2, Kernel: "Linux 6",
		GoVersion: "go1.26", Platform: "linux_amd64", BuildConfig: "fastbuild", Extra: extra})
	f.Results = []schema.Result{{Scenario: "go/unary/clients=1", Status: schema.StatusOK,
		Metrics: []schema.Metric{schema.NewMetric(schema.MetricReqPerSec, schema.UnitReqPerSec, schema.HigherIsBetter, []float64{1})}}}
	path := filepath.Join(dir, "results.json")
	if err := f.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// An artifact is current when every server digest it recorded is one the
// build makes today; one that measured a server since changed is stale, and
// the message names the artifact, the server and both digests.
func TestStale(t *testing.T) {
	dir := t.TempDir()
	goBin, lispBin := filepath.Join(dir, "go-server"), filepath.Join(dir, "lisp-server")
	for path, content := range map[string]string{goBin: "go server, today", lispBin: "lisp server, today"} {
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	current, err := ServerDigests([]string{"go=" + goBin, "lisp=" + lispBin})
	if err != nil {
		t.Fatal(err)
	}
	oldLisp := strings.Repeat("ab", 32)
	artifact := writeArtifact(t, dir, map[string]string{
		schema.ExtraServer: "go server server", schema.ExtraServerSHA256: current["go"],
		"rival_server": "lisp server server", "rival_server_sha256": oldLisp,
	})
	st, err := Stale(artifact, current, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Current() || len(st.Stale) != 1 || st.Stale[0].Key != "rival_server_sha256" {
		t.Fatalf("staleness %+v, want the rival alone stale", st)
	}
	msg := st.Message(current)
	for _, want := range []string{artifact + " is stale", "lisp server server abababababab (rival_server_sha256)",
		"it makes go " + current["go"][:12] + ", lisp " + current["lisp"][:12]} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	t.Logf("the message: %s", msg)

	fresh := writeArtifact(t, t.TempDir(), map[string]string{schema.ExtraServerSHA256: current["go"], "rival_server_sha256": current["lisp"]})
	if st, err := Stale(fresh, current, nil); err != nil || !st.Current() {
		t.Errorf("current artifact: %+v, %v", st, err)
	}
	// An artifact that records no server cannot be told stale or current.
	none := writeArtifact(t, t.TempDir(), map[string]string{schema.ExtraBinarySHA256: oldLisp})
	if st, err := Stale(none, current, nil); err != nil || !st.Unchecked || st.Current() {
		t.Errorf("artifact without servers: %+v, %v", st, err)
	}
	if _, err := ServerDigests([]string{"go"}); err == nil {
		t.Error("a server without a path was taken")
	}
	// A client whose code is measured (a CRI listing's decoding) makes its
	// artifact stale too once it changes.
	client := writeArtifact(t, t.TempDir(), map[string]string{schema.ExtraServerSHA256: current["go"],
		schema.ExtraClient: "cri-bench", schema.ExtraClientSHA256: oldLisp})
	if st, err := Stale(client, current, nil); err != nil || len(st.Stale) != 1 || st.Stale[0].Key != schema.ExtraClientSHA256 ||
		!strings.Contains(st.Message(current), "cri-bench abababababab (client_sha256)") {
		t.Errorf("artifact of a changed client: %+v, %v", st, err)
	}
	// A tuned variant that ran with other arguments than its suite's
	// benchmarks pass today is stale, though its binary is current; one run
	// with no arguments records none and is judged too; a variant or a
	// suite the check is not told of is not judged.
	tuned := writeArtifact(t, t.TempDir(), map[string]string{schema.ExtraServerSHA256: current["go"],
		"variant_go_tuned_server": "go server", "variant_go_tuned_server_args": "-gc_percent=400",
		"variant_bare_server": "go server", "variant_other_server_args": "-x"})
	want := map[string]string{"routeguide:go_tuned": "-num_stream_workers=4 -gc_percent=400", "routeguide:bare": "-y"}
	st, err = Stale(tuned, current, want)
	if err != nil || len(st.Stale) != 2 || st.Stale[0].Key != "variant_bare_server_args" || st.Stale[1].Key != "variant_go_tuned_server_args" ||
		!strings.Contains(st.Message(current), `go server with "-gc_percent=400" (variant_go_tuned_server_args), where the benchmarks now pass "-num_stream_workers=4 -gc_percent=400"`) {
		t.Errorf("artifact of an old tuning: %+v, %v\n%s", st, err, st.Message(current))
	}
	if st, err := Stale(tuned, current, map[string]string{"routeguide:go_tuned": "-gc_percent=400"}); err != nil || !st.Current() {
		t.Errorf("artifact of today's tuning: %+v, %v", st, err)
	}
	if st, err := Stale(tuned, current, map[string]string{"handlercost:go_tuned": "-a"}); err != nil || !st.Current() {
		t.Errorf("another suite's tuning judged this one's: %+v, %v", st, err)
	}
	if args, err := ParseVariantArgs("routeguide:go_tuned=-a -b;routeguide:lisp_tuned=-c;"); err != nil || len(args) != 2 || args["routeguide:go_tuned"] != "-a -b" {
		t.Errorf("ParseVariantArgs: %v, %v", args, err)
	}
	for _, bad := range []string{"=-a", "go_tuned=-a", ":go_tuned=-a"} {
		if _, err := ParseVariantArgs(bad); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
}
