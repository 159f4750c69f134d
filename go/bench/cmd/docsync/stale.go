package main

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/docsync"
)

// awaiting are the artifacts known to be stale, each with the benchmark
// target that measures it again: ARTIFACT=TARGET, the artifact's path
// relative to the workspace.
type awaiting map[string]string

func parseAwaiting(list string) (awaiting, error) {
	a := awaiting{}
	for _, entry := range strings.Fields(list) {
		artifact, target, ok := strings.Cut(entry, "=")
		if !ok || artifact == "" || !strings.HasPrefix(target, "//") || !strings.HasSuffix(target, "_results") {
			return nil, fmt.Errorf("-awaiting %q: want ARTIFACT=//PACKAGE:NAME_results", entry)
		}
		a[artifact] = target
	}
	return a, nil
}

// lookup finds the entry of an artifact, whose path is the document's
// directory joined to the part's: relative to the workspace, or absolute
// (a test's runfiles).
func (a awaiting) lookup(artifact string) (string, string, bool) {
	for key, target := range a {
		if artifact == key || strings.HasSuffix(artifact, "/"+key) {
			return key, target, true
		}
	}
	return "", "", false
}

// remeasure is the commands that measure an artifact again and regenerate
// its document: build the results target, copy its JSON over the artifact,
// rewrite the document's parts.
func remeasure(artifact, target, doc string) string {
	pkg, name, _ := strings.Cut(strings.TrimPrefix(target, "//"), ":")
	return fmt.Sprintf("tools/bazel build %s && install -m 644 %s %s && tools/bazel run //go/bench/cmd/docsync -- -fix %s",
		target, path.Join("bazel-bin", pkg, name+".json"), artifact, doc)
}

// checkStaleness checks every artifact of the documents against the
// current build's servers. A stale artifact fails the check, unless it is
// awaiting re-measurement, when it is reported with the commands that
// measure it again; one awaiting that is current fails too, so that the
// list never outlives the staleness. It returns whether all is well.
func checkStaleness(docs []string, docNames map[string]string, current docsync.Servers, variantArgs map[string]string, wait awaiting, stdout, stderr io.Writer) bool {
	ok := true
	listed := map[string]bool{}
	for _, doc := range docs {
		artifacts, err := docsync.Artifacts(doc)
		if err != nil {
			fmt.Fprintln(stderr, err)
			ok = false
			continue
		}
		for _, artifact := range artifacts {
			st, err := docsync.Stale(artifact, current, variantArgs)
			if err != nil {
				fmt.Fprintln(stderr, err)
				ok = false
				continue
			}
			st.Artifact = workspaceRelative(artifact)
			key, target, isAwaiting := wait.lookup(artifact)
			if isAwaiting {
				listed[key] = true
			}
			switch {
			case st.Unchecked:
				fmt.Fprintln(stdout, "note: "+st.Message(current))
			case st.Current() && isAwaiting:
				fmt.Fprintf(stderr, "%s is current: take it off the list of artifacts awaiting re-measurement\n", key)
				ok = false
			case st.Current():
			case isAwaiting:
				fmt.Fprintf(stdout, "STALE, awaiting re-measurement: %s\n  re-measure: %s\n", st.Message(current), remeasure(key, target, docNames[doc]))
			default:
				fmt.Fprintf(stderr, "%s\n  measure it again with its benchmark target (tools/bazel build //PACKAGE:NAME_results, its JSON over the artifact), "+
					"then tools/bazel run //go/bench/cmd/docsync -- -fix %s\n", st.Message(current), docNames[doc])
				ok = false
			}
		}
	}
	for key := range wait {
		if !listed[key] {
			fmt.Fprintf(stderr, "%s: awaiting re-measurement, but no document checked shows it\n", key)
			ok = false
		}
	}
	return ok
}
