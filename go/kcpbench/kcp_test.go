package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/internal/runfile"
)

// kcpBinary is the kcp to start: under Bazel the @kcp//:kcp in the test's
// runfiles ($KCP_BINARY is its runfiles path), under `go test` the path in
// $KCP_BINARY (tools/kcp/build prints one). Only outside Bazel may it be
// missing, and then the test says how to provide it.
func kcpBinary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("KCP_BINARY")
	switch {
	case p == "" && runfile.UnderBazel():
		t.Fatal("KCP_BINARY is not set under Bazel; the BUILD file passes @kcp//:kcp")
	case p == "":
		t.Skip("needs a kcp binary: KCP_BINARY=$(tools/kcp/build) go test ./go/kcpbench/...")
	}
	return runfile.Path(p)
}

// sharedKCP starts one kcp for the tests of this binary that need one.
func startTestKCP(t *testing.T) *kcpServer {
	t.Helper()
	bin := kcpBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	s, err := startKCP(ctx, bin, filepath.Join(t.TempDir(), "kcp"), serverFeatureGates, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}
