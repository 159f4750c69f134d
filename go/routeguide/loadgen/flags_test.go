package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"github.com/grpcbench/grpcbench/go/bench/variant"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
)

func TestParseFlagsDefaults(t *testing.T) {
	cfg, err := parseFlags([]string{"loadgen", "-addr", "127.0.0.1:10000"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []rpcKind{unary, serverStreaming, clientStreaming, bidiStreaming}; !slices.Equal(cfg.rpcs, want) {
		t.Errorf("rpcs = %v, want %v", cfg.rpcs, want)
	}
	if want := []int{1, 10, 100}; !slices.Equal(cfg.clients, want) {
		t.Errorf("clients = %v, want %v", cfg.clients, want)
	}
	if cfg.impl != "go" || cfg.duration != 5*time.Second || cfg.conns != perClient || cfg.streamMsgs != 10 {
		t.Errorf("impl %q, duration %v, conns %q, stream_msgs %d; want go, 5s, per-client, 10",
			cfg.impl, cfg.duration, cfg.conns, cfg.streamMsgs)
	}
	if cfg.bench.Reps != 3 || cfg.bench.Warmup.Duration != time.Second {
		t.Errorf("reps %d, warm-up %v; want 3, 1s", cfg.bench.Reps, cfg.bench.Warmup)
	}
}

func TestParseFlagsAcceptsEveryValue(t *testing.T) {
	server := writeScript(t, "server", "exit 0")
	cfg, err := parseFlags([]string{"loadgen", "-server", server, "-impl", "lisp",
		"-rpcs", "bidi_streaming, unary", "-clients", "100,1", "-duration", "250ms",
		"-conns", "shared", "-stream_msgs", "3", "-reps", "1", "-warmup", "0"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.serverPath != server || cfg.addr != "" || cfg.impl != "lisp" || cfg.conns != shared || cfg.streamMsgs != 3 {
		t.Errorf("parsed %+v", cfg)
	}
	if !slices.Equal(cfg.rpcs, []rpcKind{bidiStreaming, unary}) || !slices.Equal(cfg.clients, []int{100, 1}) {
		t.Errorf("rpcs %v, clients %v: want the order given", cfg.rpcs, cfg.clients)
	}
}

func TestParseFlagsRejects(t *testing.T) {
	notExecutable := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := []string{"-addr", "127.0.0.1:10000"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "exactly one of -server and -addr"},
		{[]string{"-addr", "127.0.0.1:1", "-server", "/bin/true"}, "exactly one of -server and -addr"},
		{[]string{"-server", filepath.Join(t.TempDir(), "missing")}, "-server:"},
		{[]string{"-server", notExecutable}, "-server:"},
		{[]string{"-addr", "10.1.2.3:10000"}, "loopback"},
		{[]string{"-addr", "localhost:10000"}, "loopback"},
		{[]string{"-addr", "127.0.0.1"}, "not HOST:PORT"},
		{[]string{"-addr", "127.0.0.1:0"}, "port must be"},
		{append([]string{"-rpcs", "unary,chat"}, addr...), `unknown RPC kind "chat"`},
		{append([]string{"-rpcs", "bidi,bidi_streaming"}, addr...), "given twice"},
		{append([]string{"-rpcs", ""}, addr...), "-rpcs: empty list"},
		{append([]string{"-rpcs", "unary,,bidi"}, addr...), "empty item"},
		{append([]string{"-clients", "0"}, addr...), "-clients:"},
		{append([]string{"-clients", "1,x"}, addr...), "-clients:"},
		{append([]string{"-clients", "10,10"}, addr...), "given twice"},
		{append([]string{"-clients", "100000"}, addr...), "-clients:"},
		{append([]string{"-conns", "pooled"}, addr...), `-conns "pooled"`},
		{append([]string{"-duration", "0s"}, addr...), "-duration must be positive"},
		{append([]string{"-stream_msgs", "0"}, addr...), "-stream_msgs"},
		{append([]string{"-cpus", "half"}, addr...), "-cpus: want auto, off or SERVER/CLIENT"},
		{append([]string{"-rate", "-5"}, addr...), "-rate must be from 0.01 to 1e+09 calls/s, got -5"},
		{append([]string{"-rate", "100,2e9"}, addr...), "-rate must be from 0.01 to 1e+09 calls/s, got 2e+09"},
		{append([]string{"-rate", "100,x"}, addr...), `-rate "x": not a number`},
		{append([]string{"-rate", "100,100"}, addr...), "-rate 100 given twice"},
		{append([]string{"-rate", "100", "-total_conns", "100"}, addr...), "separate suites"},
		{append([]string{"-cpus", "0-1/1"}, addr...), "overlap"},
		{append([]string{"-cpus", "0/x"}, addr...), "not a CPU number"},
		{append([]string{"-impl", "go 1.26"}, addr...), "-impl"},
		{append([]string{"-impl", "go/grpc"}, addr...), "-impl"},
		{append([]string{"-reps", "0"}, addr...), "-reps"},
		{append([]string{"-warmup", "soon"}, addr...), "warm-up"},
		{append([]string{"-server_cpu_quota", "-1"}, addr...), "-server_cpu_quota must be 0 (none) or up to 64 cores, got -1"},
		{[]string{"-server", "/bin/true", "-server_cpu_quota", "0.05"}, "-server_cpu_quota 0.05 is below the kernel's 1 ms per 10ms period (0.1 cores)"},
		{[]string{"-server", "/bin/true", "-server_cpu_quota", "0.25,0.25"}, "-server_cpu_quota 0.25 given twice"},
		{[]string{"-server", "/bin/true", "-server_cpu_quota", "0.5", "-server_cpu_period", "2s"}, "-server_cpu_period 2s: the kernel accepts 1ms to 1s"},
		{[]string{"-server", "/bin/true", "-server_cpu_quota", "0.5", "-server_cpu_period", "10ms,10ms"}, "-server_cpu_period 10ms given twice"},
		{[]string{"-server", "/bin/true", "-server_cpu_quota", "0.5", "-server_cpu_period", "soon"}, "not a duration"},
		{append([]string{"-server_cpu_quota", "0.5"}, addr...), "-server_cpu_quota needs -server"},
		{[]string{"-server", "/bin/true", "-server_cpu_quota", "0.5", "-rate", "100"}, "throttling distorts"},
		{[]string{"-server", "/bin/true", "-server_cpu_quota", "half"}, "not a number of cores"},
		{append([]string{"-bogus"}, addr...), "not defined"},
		{append(addr, "extra"), "unexpected arguments"},
	} {
		var stderr bytes.Buffer
		_, err := parseFlags(append([]string{"loadgen"}, tc.args...), &stderr)
		if err == nil || errors.Is(err, flag.ErrHelp) {
			t.Errorf("%q: error %v, want a usage error", tc.args, err)
			continue
		}
		if !strings.Contains(stderr.String(), tc.want) || !strings.Contains(stderr.String(), "usage: loadgen") {
			t.Errorf("%q: stderr lacks %q or the usage:\n%s", tc.args, tc.want, &stderr)
		}
	}
}

func TestParseFlagsReportsEveryProblem(t *testing.T) {
	var stderr bytes.Buffer
	_, err := parseFlags([]string{"loadgen", "-rpcs", "nope", "-conns", "nope"}, &stderr)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"-server and -addr", "-rpcs", "-conns"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestRunExitCodesForUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"loadgen"}, harness.ExitUsage},
		{[]string{"loadgen", "-addr", "127.0.0.1:1", "-conns", "x"}, harness.ExitUsage},
		{[]string{"loadgen", "-addr", "127.0.0.1:1", "-server_args", "-unary_inline"}, harness.ExitUsage},
		{[]string{"loadgen", "-h"}, harness.ExitOK},
	} {
		var stdout, stderr bytes.Buffer
		if got := run(context.Background(), tc.args, &stdout, &stderr); got != tc.want {
			t.Errorf("run %q = %d, want %d; stderr:\n%s", tc.args, got, tc.want, &stderr)
		}
		if stdout.Len() != 0 {
			t.Errorf("run %q wrote to stdout: %s", tc.args, &stdout)
		}
	}
}

// writeScript writes an executable shell script with the given body and
// returns its path.
func writeScript(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRivalFlags: a rival needs a server beside it and a label of its own.
func TestRivalFlags(t *testing.T) {
	server := writeScript(t, "server", "exit 0")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-server", server, "-rival", server}, "-rival_impl"},
		{[]string{"-server", server, "-rival", server, "-rival_impl", "go"}, "label of its own"},
		{[]string{"-server", server, "-rival_impl", "lisp"}, "need -rival"},
		{[]string{"-server", server, "-rival_args", "-x"}, "need -rival"},
		{[]string{"-addr", "127.0.0.1:1", "-rival", server, "-rival_impl", "lisp"}, "-rival needs -server"},
		{[]string{"-server", server, "-rival", "/no/such/server", "-rival_impl", "lisp"}, "-rival:"},
	} {
		var stderr bytes.Buffer
		if _, err := parseFlags(append([]string{"loadgen"}, tc.args...), &stderr); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one about %q", tc.args, err, tc.want)
		}
	}
	cfg, err := parseFlags([]string{"loadgen", "-server", server, "-rival", server, "-rival_impl", "lisp_tuned", "-rival_args", "-a  -b"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.servers(); len(got) != 2 || got[1].impl != "lisp_tuned" || strings.Join(got[1].args, " ") != "-a -b" {
		t.Errorf("servers %+v", got)
	}
}

// TestVariantFlags: a variant is the binary of a labelled server with
// arguments added, under a label of its own, recorded under its own keys.
func TestVariantFlags(t *testing.T) {
	goServer, lispServer := writeScript(t, "go-server", "exit 0"), writeScript(t, "lisp-server", "exit 0")
	base := []string{"loadgen", "-server", goServer, "-rival", lispServer, "-rival_impl", "lisp", "-rival_args", "-x"}
	for _, tc := range []struct {
		variant, want string
	}{
		{"lisp_tuned", "want LABEL=IMPL:ARGS"},
		{"lisp_tuned=lisp", "want LABEL=IMPL:ARGS"},
		{"lisp tuned=lisp:-a", "label"},
		{"lisp_tuned=rust:-a", "neither -impl nor -rival_impl"},
		{"lisp=go:-a", "label \"lisp\" is taken"},
	} {
		var stderr bytes.Buffer
		if _, err := parseFlags(append(base, "-variant", tc.variant), &stderr); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-variant %q: error %v, want one about %q", tc.variant, err, tc.want)
		}
	}
	if _, err := parseFlags([]string{"loadgen", "-addr", "127.0.0.1:1", "-variant", "t=go:-a"}, io.Discard); err == nil || !strings.Contains(err.Error(), "-variant needs -server") {
		t.Errorf("a variant without -server: %v", err)
	}
	cfg, err := parseFlags(append(base, "-variant", "lisp_tuned=lisp:-unary_inline", "-variant", "go_gc=go:-gc 50"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.servers()
	if len(got) != 4 || got[2].impl != "lisp_tuned" || got[2].path != lispServer || strings.Join(got[2].args, " ") != "-x -unary_inline" ||
		got[3].impl != "go_gc" || got[3].path != goServer || strings.Join(got[3].args, " ") != "-gc 50" {
		t.Errorf("servers %+v", got)
	}
	if p := variant.ExtraPrefix(2, got[2].variantServer()); p != "variant_lisp_tuned_" {
		t.Errorf("prefix %q", p)
	}
	if p := variant.ExtraPrefix(1, got[1].variantServer()); p != "rival_" {
		t.Errorf("rival prefix %q", p)
	}
}
