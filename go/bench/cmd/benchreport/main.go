// Command benchreport renders grpcbench results files as a Markdown report
// with SVG charts, or compares two runs.
//
// Usage:
//
//	benchreport [--out DIR] FILE_OR_DIR...
//	benchreport --compare [--max_regression PCT] OLD NEW
//
// Without --out the report's tables are printed. With --out, DIR/report.md
// and the charts it links to are written. A directory argument stands for
// the *.json files under it. --compare prints, per metric measured in both
// runs, the change of the median and whether it is significant (Mann-Whitney
// U test, alpha 0.05, as benchstat); OLD and NEW are files or directories.
// It fails when one of a suite's primary metrics is worse by more than
// --max_regression percent of the old median (default 5), significantly
// after the Benjamini-Hochberg correction across the primary metrics
// compared, naming each one on stderr: a regression check between
// revisions for CI or a reviewer.
//
// --compare judges only results measured in turns in one run, so in one
// build action, on one host (both revisions started by one load generator,
// -server and -rival, its results split by revision): a change between
// separate runs could be the machine's as much as the code's. Given
// anything else it prints why on stderr and gives no verdict.
//
// Exit status: 0 on success, 1 on invalid input, 2 on a usage error, 3 when
// --compare finds a regression beyond the threshold, 4 when --compare
// refuses results of different hosts (their host keys differ, or one has
// none), 5 when it refuses results of one host measured in separate runs
// (or of a run that does not record which).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"

	// Every suite's layout, goals and gated metrics.
	_ "github.com/grpcbench/grpcbench/go/bench/suites"
)

// The exit statuses of a comparison refused: no verdict either way.
const (
	exitDifferentHosts  = 4
	exitSeparateActions = 5
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	flags.SetOutput(stderr)
	outDir := flags.String("out", "", "write report.md and the SVG charts to `dir` instead of printing the tables")
	compare := flags.Bool("compare", false, "compare two runs: benchreport --compare OLD NEW")
	maxRegression := flags.Float64("max_regression", 5, "with --compare, fail (exit status 3) when a primary metric is significantly worse (after correction for the number compared) by more than `percent` of its old median")
	flags.Usage = func() {
		fmt.Fprint(stderr, "usage: benchreport [--out DIR] FILE_OR_DIR...\n       benchreport --compare [--max_regression PCT] OLD NEW\n\n")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usageError := func(msg string) int {
		fmt.Fprintln(stderr, "benchreport: "+msg)
		flags.Usage()
		return 2
	}
	var err error
	switch {
	case *compare && flags.NArg() != 2:
		return usageError("--compare needs exactly two arguments, OLD and NEW")
	case *compare && *outDir != "":
		return usageError("--compare prints its table; it takes no --out")
	case *maxRegression < 0:
		return usageError("--max_regression is a percentage, 0 or more")
	case *compare:
		var worse []report.MetricChange
		worse, err = runCompare(flags.Arg(0), flags.Arg(1), *maxRegression, stdout)
		if refused := (*report.CompareRefusal)(nil); errors.As(err, &refused) {
			fmt.Fprintf(stderr, "benchreport: %v\n", refused)
			if refused.Reason == report.DifferentHosts {
				return exitDifferentHosts
			}
			return exitSeparateActions
		}
		if err == nil && len(worse) > 0 {
			fmt.Fprintf(stderr, "benchreport: metrics significantly worse by more than %g%% (%d):\n", *maxRegression, len(worse))
			for _, r := range worse {
				fmt.Fprintf(stderr, "  %s/%s %s: %s\n", r.Suite, r.Scenario, report.MetricLabel(r.Metric), r.Delta())
			}
			return 3
		}
	case flags.NArg() == 0:
		return usageError("no results files or directories given")
	default:
		err = runReport(flags.Args(), *outDir, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchreport: %v\n", err)
		return 1
	}
	return 0
}

func runReport(args []string, outDir string, stdout, stderr io.Writer) error {
	files, err := load(args)
	if err != nil {
		return err
	}
	r, err := report.Render(files, report.Options{Charts: outDir != ""})
	if err != nil {
		return err
	}
	if outDir == "" {
		_, err = io.WriteString(stdout, r.Markdown)
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outDir, "report.md"), []byte(r.Markdown), 0o644); err != nil {
		return err
	}
	for _, c := range r.Charts {
		if err := os.WriteFile(filepath.Join(outDir, c.Name), c.SVG, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "wrote %s and %d charts\n", filepath.Join(outDir, "report.md"), len(r.Charts))
	return nil
}

// runCompare prints the comparison of two runs and returns the metrics
// that are significantly worse by more than maxRegression percent.
func runCompare(oldArg, newArg string, maxRegression float64, stdout io.Writer) ([]report.MetricChange, error) {
	old, err := load([]string{oldArg})
	if err != nil {
		return nil, err
	}
	cur, err := load([]string{newArg})
	if err != nil {
		return nil, err
	}
	c, err := report.Compare(old, cur)
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(stdout, c.Markdown()); err != nil {
		return nil, err
	}
	return c.Regressions(maxRegression), nil
}

// load reads and validates the results files named by args, expanding
// directories to the *.json files beneath them in lexical order.
func load(args []string) ([]*schema.File, error) {
	var paths []string
	for _, arg := range args {
		info, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			paths = append(paths, arg)
			continue
		}
		var found []string
		err = filepath.WalkDir(arg, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
				found = append(found, path)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no .json results files", arg)
		}
		slices.Sort(found)
		paths = append(paths, found...)
	}
	var files []*schema.File
	var errs []error
	for _, p := range paths {
		f, err := schema.ReadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, f)
	}
	return files, errors.Join(errs...)
}
