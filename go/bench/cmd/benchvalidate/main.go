// Command benchvalidate checks results files against the grpcbench results
// schema (go/bench/schema), listing every problem of every file.
//
// Usage:
//
//	benchvalidate [-rewrite] FILE...
//
// With -rewrite it also writes each valid file back in the form every tool
// here writes (a line a result), for files written before that form (under
// `bazel run`, give absolute paths). It exits 0 when all files
// are valid, 1 when any is invalid, unreadable or cannot be rewritten, and 2
// on a usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchvalidate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rewrite := fs.Bool("rewrite", false, "also write each valid file back in the canonical form (a line a result)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: benchvalidate [-rewrite] FILE...\n\nChecks grpcbench results files against schema %s.\n", schema.Version)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "benchvalidate: no files given")
		fs.Usage()
		return 2
	}
	status := 0
	for _, path := range fs.Args() {
		f, err := schema.ReadFile(path)
		if err != nil {
			// ReadFile prefixes the path; the problems follow, one a line.
			fmt.Fprintf(stderr, "FAIL %v\n", err)
			status = 1
			continue
		}
		if *rewrite {
			if err := f.WriteFile(path); err != nil {
				fmt.Fprintf(stderr, "FAIL %v\n", err)
				status = 1
				continue
			}
		}
		fmt.Fprintf(stdout, "ok   %s (suite %s, %d scenarios)\n", path, f.Suite, len(f.Results))
	}
	return status
}
