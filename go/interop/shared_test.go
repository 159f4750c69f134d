package interop_test

import (
	"flag"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

var (
	readme          = flag.String("readme", "", "rlocation of lisp/clgrpc/README.md, which records what these tests measure")
	h2spec          = flag.String("h2spec", "", "rlocation of h2spec")
	h2specSummaryRe = regexp.MustCompile(`(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed`)
)

func readReadme(t *testing.T) string {
	t.Helper()
	if *readme == "" {
		t.Fatal("-readme is required")
	}
	data, err := os.ReadFile(runfile.Path(*readme))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// startServer starts the server at rlocation path with args, which must
// make it print "listening on HOST:PORT", and stops it when the test ends.
func startServer(t *testing.T, name string, ready time.Duration, path string, args ...string) *serverproc.Process {
	t.Helper()
	return startServerIn(t, name, nil, ready, path, args...)
}

// startServerIn is startServer with the environment env (nil: this
// process's).
func startServerIn(t *testing.T, name string, env []string, ready time.Duration, path string, args ...string) *serverproc.Process {
	t.Helper()
	return serverproc.StartForTestIn(t, name, env, append([]string{runfile.Path(path)}, args...), ready, 10*time.Second)
}
