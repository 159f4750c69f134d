// Command docsync checks, or with -fix regenerates, the parts of documents
// that show benchmark results (go/bench/docsync):
//
//	tools/bazel run //go/bench/cmd/docsync -- -fix lisp/clgrpc/PERFORMANCE.md
//
// Paths are relative to the workspace when run by Bazel. It exits 1 when a
// document differs from its artifacts (without -fix), 2 on a usage error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/grpcbench/grpcbench/go/bench/docsync"
)

func main() {
	if dir := os.Getenv("BUILD_WORKSPACE_DIRECTORY"); dir != "" {
		if err := os.Chdir(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("docsync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fix := fs.Bool("fix", false, "rewrite the parts that differ instead of reporting them")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: docsync [-fix] DOCUMENT.md...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	status := 0
	for _, path := range fs.Args() {
		if *fix {
			changed, err := docsync.Fix(path)
			if err != nil {
				fmt.Fprintln(stderr, err)
				status = 1
			} else if changed {
				fmt.Fprintf(stdout, "rewrote %s\n", path)
			}
			continue
		}
		problems, err := docsync.Check(path)
		if err != nil {
			fmt.Fprintln(stderr, err)
			status = 1
		}
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
			status = 1
		}
	}
	if status != 0 && !*fix {
		fmt.Fprintln(stderr, "regenerate with: tools/bazel run //go/bench/cmd/docsync -- -fix", fs.Args())
	}
	return status
}
