package harness

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func newTestFlagSet(f *Flags) (*flag.FlagSet, *bytes.Buffer) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	f.Register(fs)
	return fs, &out
}

func TestFlagsParse(t *testing.T) {
	f := &Flags{Reps: 5}
	fs, _ := newTestFlagSet(f)
	clients := fs.Int("clients", 1, "suite-specific flag")
	err := f.Parse(fs, []string{"-out", "r.json", "-benchfmt", "r.txt", "-warmup", "2s", "-build_config", "opt", "-revision", "abc", "-platform", "linux_arm64", "-clients", "10"})
	if err != nil {
		t.Fatal(err)
	}
	want := Flags{Out: "r.json", Benchfmt: "r.txt", Reps: 5, Warmup: Warmup{Duration: 2 * time.Second}, Platform: "linux_arm64", BuildConfig: "opt", Revision: "abc"}
	if *f != want {
		t.Errorf("flags = %+v, want %+v", *f, want)
	}
	if *clients != 10 {
		t.Errorf("suite flag clients = %d", *clients)
	}
	env := f.Environment()
	if env.Platform != "linux_arm64" || env.BuildConfig != "opt" || env.Revision != "abc" {
		t.Errorf("environment = %+v", env)
	}
	// Every file of one run carries its run, so that only they are compared.
	if run := env.Extra[schema.ExtraRunID]; len(run) < 20 || (&Flags{}).Environment().Extra[schema.ExtraRunID] != run {
		t.Errorf("run %q, not one of at least 20 characters for every file of the run", run)
	}
}

func TestFlagsDefaults(t *testing.T) {
	f := &Flags{}
	fs, _ := newTestFlagSet(f)
	if err := f.Parse(fs, nil); err != nil {
		t.Fatal(err)
	}
	if f.Reps != 3 || f.BuildConfig != "dev" || !f.Warmup.IsZero() || f.Out != "" || !strings.Contains(f.Platform, "_") {
		t.Errorf("defaults = %+v", *f)
	}
}

func TestWarmupValues(t *testing.T) {
	for in, want := range map[string]Warmup{"500": {Ops: 500}, "2s": {Duration: 2 * time.Second}, "0": {}, "1m30s": {Duration: 90 * time.Second}} {
		var w Warmup
		if err := w.Set(in); err != nil || w != want {
			t.Errorf("Set(%q) = %+v, %v; want %+v", in, w, err, want)
		}
		if in != "1m30s" && w.String() != in {
			t.Errorf("String() = %q, want %q", w.String(), in)
		}
	}
	for _, bad := range []string{"", "-5", "-1s", "lots"} {
		var w Warmup
		if err := w.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestFlagsParseErrorsPrintUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-nosuchflag"},
		{"-reps", "0"},
		{"-reps", "many"},
		{"-warmup", "lots"},
		{"-build_config", ""},
		{"stray"},
	} {
		f := &Flags{}
		fs, out := newTestFlagSet(f)
		err := f.Parse(fs, args)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", args)
			continue
		}
		if !strings.Contains(out.String(), "Usage of bench") || !strings.Contains(out.String(), "-out file") {
			t.Errorf("Parse(%q) printed no usage:\n%s", args, out.String())
		}
	}
}

// MustParse exits with status 2 on a usage error. The test re-runs its own
// binary to observe the exit.
func TestMustParseExitsWithStatus2(t *testing.T) {
	if os.Getenv("HARNESS_MUSTPARSE_CHILD") == "1" {
		f := &Flags{}
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		f.Register(fs)
		f.MustParse(fs, []string{"-reps", "-3"})
		os.Exit(0) // not reached if MustParse works
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMustParseExitsWithStatus2$")
	cmd.Env = append(os.Environ(), "HARNESS_MUSTPARSE_CHILD=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("child exit = %v, want status 2; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "-reps must be at least 1") {
		t.Errorf("stderr lacks the reason:\n%s", stderr.String())
	}
}

func TestEmitWritesEverything(t *testing.T) {
	dir := t.TempDir()
	f := &Flags{}
	fs, _ := newTestFlagSet(f)
	out, bench := filepath.Join(dir, "results.json"), filepath.Join(dir, "results.txt")
	if err := f.Parse(fs, []string{"-out", out, "-benchfmt", bench, "-build_config", "opt"}); err != nil {
		t.Fatal(err)
	}
	file := schema.NewFile("echo", f.Environment())
	reps := []Rep{{Wall: time.Second, Ops: 1000, Latency: Percentiles{P50: time.Millisecond}}}
	file.Results = []schema.Result{Result("small", map[string]any{"size": 64}, reps, nil)}

	var stdout bytes.Buffer
	if err := f.Emit(&stdout, file, "example.com/echo"); err != nil {
		t.Fatal(err)
	}
	back, err := schema.ReadFile(out)
	if err != nil {
		t.Fatalf("written results do not validate: %v", err)
	}
	if back.Environment.BuildConfig != "opt" || back.Results[0].Scenario != "small" {
		t.Errorf("read back %+v", back)
	}
	text, err := os.ReadFile(bench)
	if err != nil || !strings.Contains(string(text), "BenchmarkEcho/small") {
		t.Errorf("benchfmt file: %v\n%s", err, text)
	}
	if !strings.Contains(stdout.String(), "| small | 1,000 |") {
		t.Errorf("stdout lacks the results table:\n%s", stdout.String())
	}
}

func TestEmitRefusesInvalidResults(t *testing.T) {
	dir := t.TempDir()
	f := &Flags{Out: filepath.Join(dir, "r.json"), BuildConfig: "dev"}
	file := schema.NewFile("echo", f.Environment()) // no results: invalid
	if err := f.Emit(&bytes.Buffer{}, file, "x"); err == nil {
		t.Fatal("Emit accepted a file without results")
	}
	if _, err := os.Stat(f.Out); !os.IsNotExist(err) {
		t.Error("an invalid results file was written")
	}
}
