// Command docsync checks, or with -fix regenerates, the parts of documents
// that show benchmark results (go/bench/docsync):
//
//	tools/bazel run //go/bench/cmd/docsync -- -fix lisp/clgrpc/PERFORMANCE.md
//
// Paths are relative to the workspace when run by Bazel. It exits 1 when a
// document differs from its artifacts (without -fix), 2 on a usage error.
//
// With -servers, the current build's server binaries (NAME=PATH, space
// separated), it also checks that each artifact measured those servers: an
// artifact whose recorded server digests are none of theirs is stale, and
// fails the check (exit 1), unless -awaiting lists it (ARTIFACT=TARGET,
// the artifact relative to the workspace and the results target that
// measures it again), when it is reported with the commands to re-measure
// it and does not fail.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

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
	servers := fs.String("servers", "", "check staleness against the current server binaries: space-separated `NAME=PATH`s")
	variantList := fs.String("variant_args", "", "with -servers, the arguments each variant server runs with today: `SUITE:LABEL=ARGS` pairs separated by semicolons (SUITE also covers SUITE_*); an artifact whose variant ran with others is stale")
	awaitingList := fs.String("awaiting", "", "with -servers, artifacts known to be stale: space-separated `ARTIFACT=TARGET`s, each with the results target that re-measures it")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: docsync [-fix] [-servers 'NAME=PATH...' [-variant_args 'SUITE:LABEL=ARGS;...'] [-awaiting 'ARTIFACT=TARGET...']] DOCUMENT.md...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	wait, err := parseAwaiting(*awaitingList)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	variantArgs, err := docsync.ParseVariantArgs(*variantList)
	if err != nil {
		fmt.Fprintln(stderr, "-variant_args:", err)
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
	if *servers != "" {
		current, err := docsync.ServerDigests(strings.Fields(*servers))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		names := map[string]string{}
		for _, doc := range fs.Args() {
			names[doc] = workspaceRelative(doc)
		}
		if !checkStaleness(fs.Args(), names, current, variantArgs, wait, stdout, stderr) {
			status = 1
		}
	}
	return status
}

// workspaceRelative is a document's path as a command in the workspace
// names it: a path in a test's runfiles loses everything up to the main
// repository's directory there.
func workspaceRelative(doc string) string {
	if i := strings.LastIndex(doc, "/_main/"); i >= 0 {
		return doc[i+len("/_main/"):]
	}
	return doc
}
