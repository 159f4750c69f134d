package harness

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Flags are the flags every benchmark binary shares, so that the Bazel rule
// can drive any of them the same way. Suite-specific flags (clients,
// duration, payload size, ...) are registered by the binary on the same
// FlagSet.
type Flags struct {
	Out         string // -out: results JSON path; empty prints only
	Benchfmt    string // -benchfmt: Go benchmark format path; empty for none
	Reps        int    // -reps: measured repetitions per scenario
	Warmup      Warmup // -warmup: "500" operations, "2s", or "0"
	Platform    string // -platform: recorded platform, e.g. linux_amd64
	BuildConfig string // -build_config: fastbuild, opt, dbg; "dev" by default
	Revision    string // -revision: source revision, when stamped
	Host        string // -host: this machine's description (tools/bench/host_key.sh)
}

// Register defines the shared flags on fs, with f's current field values as
// defaults: a suite sets its own defaults (say Reps: 5) before calling it.
func (f *Flags) Register(fs *flag.FlagSet) {
	if f.Reps == 0 {
		f.Reps = 3
	}
	if f.Platform == "" {
		f.Platform = runtime.GOOS + "_" + runtime.GOARCH
	}
	if f.BuildConfig == "" {
		f.BuildConfig = "dev"
	}
	fs.StringVar(&f.Out, "out", f.Out, "write the results `file` (JSON, schema "+schema.Version+"); if empty, only print the table")
	fs.StringVar(&f.Benchfmt, "benchfmt", f.Benchfmt, "also write the results in Go benchmark format to `file`, for benchstat")
	fs.IntVar(&f.Reps, "reps", f.Reps, "measured repetitions per scenario")
	fs.Var(&f.Warmup, "warmup", "unmeasured warm-up before each scenario: an operation count (500), a duration (2s) or 0")
	fs.StringVar(&f.Platform, "platform", f.Platform, "platform to record, GOOS_GOARCH")
	fs.StringVar(&f.BuildConfig, "build_config", f.BuildConfig, "build configuration to record (fastbuild, opt, dbg)")
	fs.StringVar(&f.Revision, "revision", f.Revision, "source revision to record, when stamped")
	fs.StringVar(&f.Host, "host", f.Host, "this machine's `description` to record (tools/bench/host_key.sh; the benchmark rules pass it): the report compares results of one host only")
}

// Parse parses args. On a bad flag or value it prints the problem and the
// usage to fs.Output() and returns the error (flag.ErrHelp for -h). The
// shared flags leave no room for positional arguments, so any is an error.
func (f *Flags) Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err // the flag package has printed the message and usage
	}
	err := f.check()
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if err != nil {
		fmt.Fprintln(fs.Output(), err)
		fs.Usage()
	}
	return err
}

// MustParse is Parse for main: it exits with status 2 on a usage error, the
// convention of the flag package, and 0 after -h.
func (f *Flags) MustParse(fs *flag.FlagSet, args []string) {
	if err := f.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
}

func (f *Flags) check() error {
	var errs []error
	if f.Reps < 1 {
		errs = append(errs, fmt.Errorf("-reps must be at least 1, got %d", f.Reps))
	}
	if f.BuildConfig == "" {
		errs = append(errs, errors.New("-build_config must not be empty"))
	}
	return errors.Join(errs...)
}

// runID is this process's run: every results file it writes carries it,
// and only files of one run are compared (schema.ExtraRunID).
var runID = schema.NewRunID()

// Environment fingerprints this machine and records the build facts given
// by the flags, the time, the run, and what identifies the measuring binary
// and its runtime settings: its SHA-256 and its GOGC.
func (f *Flags) Environment() schema.Environment {
	env := schema.Fingerprint()
	if f.Platform != "" {
		env.Platform = f.Platform
	}
	env.BuildConfig = f.BuildConfig
	env.Revision = f.Revision
	env.Host = f.Host
	env.MeasuredAt = time.Now().UTC().Format(time.RFC3339)
	if env.Extra == nil {
		env.Extra = map[string]string{}
	}
	env.Extra[schema.ExtraGOGC] = schema.GOGC()
	env.Extra[schema.ExtraRunID] = runID
	if exe, err := os.Executable(); err == nil {
		env.Extra[schema.ExtraBinarySHA256] = schema.FileSHA256(exe)
	}
	return env
}
