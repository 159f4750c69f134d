package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/grpcbench/grpcbench/go/bench/harness"
)

func TestParseFlagsDefaults(t *testing.T) {
	var stderr strings.Builder
	cfg, err := parseFlags([]string{"cri-bench"}, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !slices.Equal(cfg.modes, methodsFlag(methods)) || cfg.n != 100 || !slices.Equal(cfg.containers, intsFlag{32}) ||
		!slices.Equal(cfg.perChunk, intsFlag{16}) || cfg.transport != "unix" || cfg.connect || cfg.harness.Reps != 3 ||
		!slices.Equal(cfg.codecs, stringsFlag{"criwire"}) || cfg.gcPercent != 100 {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestParseFlagsLists(t *testing.T) {
	cfg, err := parseFlags([]string{"cri-bench", "--mode=list,chunked", "-containers", "32,1024", "--per_chunk", "16,256", "-n", "7"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.modes, methodsFlag{methodList, methodChunked}) || !slices.Equal(cfg.containers, intsFlag{32, 1024}) ||
		!slices.Equal(cfg.perChunk, intsFlag{16, 256}) || cfg.n != 7 {
		t.Errorf("got %+v", cfg)
	}
}

// Bad flags print the problem and the usage, and exit with status 2.
func TestBadFlagsExitWithUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-mode", "batch"},
		{"-mode", ""},
		{"-n", "0"},
		{"-n", "many"},
		{"-containers", "0"},
		{"-containers", "32,x"},
		{"-per_chunk", "0"},
		{"-annotations", "-3"},
		{"-labels", "-1"},
		{"-transport", "udp"},
		{"-codec", "gogo"},
		{"-codec", "criwire,criwire"},
		{"-codec", ""},
		{"-endpoint", "unix:///tmp/x.sock", "-codec", "criwire,floor"},
		{"-gogc", "0"},
		{"-gogc", "-2"},
		{"-op_timeout", "0s"},
		{"-reps", "0"},
		{"-warmup", "soon"},
		{"-endpoint", "tcp://192.0.2.1:80"},
		{"-endpoint", "unix:///tmp/x.sock", "-server", "/bin/true"},
		{"-endpoint", "unix:///tmp/x.sock", "-containers", "32,1024"},
		{"-no-such-flag"},
		{"positional"},
	} {
		var stdout, stderr strings.Builder
		code := run(context.Background(), append([]string{"cri-bench"}, args...), &stdout, &stderr)
		if code != harness.ExitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, harness.ExitUsage)
		}
		if !strings.Contains(stderr.String(), "usage: cri-bench") {
			t.Errorf("%q: no usage on stderr:\n%s", args, stderr.String())
		}
		if stdout.Len() > 0 {
			t.Errorf("%q: wrote to stdout: %s", args, stdout.String())
		}
	}
}

func TestHelpExitsZero(t *testing.T) {
	var stderr strings.Builder
	if code := run(context.Background(), []string{"cri-bench", "-h"}, &strings.Builder{}, &stderr); code != harness.ExitOK {
		t.Errorf("-h: exit %d", code)
	}
	if !strings.Contains(stderr.String(), "-per_chunk") {
		t.Errorf("-h usage lacks -per_chunk:\n%s", stderr.String())
	}
}

func TestMissingServerIsAUsageError(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var stderr strings.Builder
	if code := run(context.Background(), []string{"cri-bench"}, &strings.Builder{}, &stderr); code != harness.ExitUsage {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, harness.ExitUsage, stderr.String())
	}
	if !strings.Contains(stderr.String(), "-server PATH") {
		t.Errorf("stderr does not say how to fix it:\n%s", stderr.String())
	}
}
