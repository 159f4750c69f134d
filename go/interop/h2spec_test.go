package interop_test

import (
	"context"
	"flag"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/internal/runfile"
)

var (
	goRouteGuide   = flag.String("go_routeguide_server", "", "rlocation of the Go RouteGuide server")
	lispRouteGuide = flag.String("lisp_routeguide_server", "", "rlocation of the Lisp RouteGuide server")
)

// runH2spec runs every h2spec case against a RouteGuide server and returns
// its summary line, "N tests, N passed, N skipped, N failed".
func runH2spec(t *testing.T, name, server string) string {
	t.Helper()
	p := startServer(t, name+" RouteGuide", 60*time.Second, server, "-addr", "127.0.0.1:0")
	host, port, _ := strings.Cut(p.Addr(), ":")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// -o: seconds to wait for each expected frame.
	out, _ := exec.CommandContext(ctx, runfile.Path(*h2spec), "-h", host, "-p", port, "-o", "2").CombinedOutput()
	summary := h2specSummaryRe.FindString(string(out))
	if summary == "" {
		t.Fatalf("h2spec printed no summary:\n%s", out)
	}
	t.Logf("h2spec against the %s server: %s", name, summary)
	if p.ExitedEarly() != nil {
		t.Errorf("the %s server died under h2spec: %v", name, p.ExitedEarly())
	}
	return summary
}

// TestH2spec runs the HTTP/2 conformance suite against both RouteGuide
// servers. Every case must pass against the Lisp server, none skipped, and
// the README must record that result. grpc-go's result is logged for the
// README beside it, not asserted: some of its cases pass or fail by timing.
func TestH2spec(t *testing.T) {
	if *h2spec == "" || *goRouteGuide == "" || *lispRouteGuide == "" {
		t.Fatal("-h2spec, -go_routeguide_server and -lisp_routeguide_server are required")
	}
	lisp := runH2spec(t, "lisp", *lispRouteGuide)
	if m := h2specSummaryRe.FindStringSubmatch(lisp); m[1] != m[2] {
		t.Errorf("h2spec against the Lisp server: %s, want every case passed", lisp)
	}
	if !strings.Contains(readReadme(t), "clgrpc: "+lisp) {
		t.Errorf("lisp/clgrpc/README.md does not record the measured h2spec result %q for clgrpc", lisp)
	}
	runH2spec(t, "go", *goRouteGuide)
}
