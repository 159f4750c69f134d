package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

func runClient(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code = run(ctx, append([]string{"client"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestServeDemo(t *testing.T) {
	code, stdout, stderr := runClient(t, "-serve")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"in-process server listening on 127.0.0.1:",
		"Berkshire Valley Management Area Trail",
		"100 features",
		"RecordRoute sent 10 points: point_count=10 feature_count=10",
		"RouteChat sent 6 notes, received 3",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q; stdout:\n%s", want, stdout)
		}
	}
}

func TestSingleRPCAndPoints(t *testing.T) {
	code, stdout, stderr := runClient(t, "-serve", "-rpc", "record", "-points", "3", "-timeout", "5s")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "point_count=3") || strings.Contains(stdout, "GetFeature") {
		t.Errorf("unexpected report:\n%s", stdout)
	}
}

func TestUnreachableServer(t *testing.T) {
	// Take a free port, then close it so nothing listens there.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()

	code, _, stderr := runClient(t, "-addr", addr, "-timeout", "5s")
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	if !strings.Contains(stderr, "routeguide client: server "+addr+": GetFeature") ||
		!strings.Contains(stderr, "Unavailable") {
		t.Errorf("stderr does not explain the failure:\n%s", stderr)
	}
}

func TestCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		inStderr string
	}{
		{[]string{"-nope"}, "usage:"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-rpc", "bogus"}, `-rpc "bogus" is not one of`},
		{[]string{"-points", "-1"}, "-points must not be negative"},
		{[]string{"-timeout", "0s"}, "-timeout must be positive"},
		{[]string{"-serve", "-addr", "127.0.0.1:1"}, "mutually exclusive"},
	} {
		code, stdout, stderr := runClient(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.inStderr) || !strings.Contains(stderr, "usage:") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 with %q and usage", tc.args, code, stderr, tc.inStderr)
		}
		if stdout != "" {
			t.Errorf("%q wrote to stdout: %q", tc.args, stdout)
		}
	}
	if code, _, _ := runClient(t, "-h"); code != exitOK {
		t.Errorf("-h: exit %d, want 0", code)
	}
}
