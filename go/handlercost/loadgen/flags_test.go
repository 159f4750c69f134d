package main

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/placement"
	"github.com/grpcbench/grpcbench/go/handlercost/wire"
)

func TestParseKinds(t *testing.T) {
	kinds, err := parseKinds(defaultKinds)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range kinds {
		names = append(names, k.name())
	}
	if got, want := strings.Join(names, ","), "fast,spin_200us,sleep_2ms,sleep_100ms_1000_callers"; got != want {
		t.Errorf("names %s, want %s", got, want)
	}
	if k := kinds[3]; k.method != wire.Sleep || k.d != 100*time.Millisecond || k.callers != 1000 {
		t.Errorf("sleep:100ms@1000 parsed as %+v", k)
	}
	for _, bad := range []string{"fast:1ms", "sleep", "spin:0s", "sleep:2m", "nap:1ms", "fast@0", "fast,fast", "sleep:1ms@x", "sleep:1ms@3,sleep:1ms@3"} {
		if _, err := parseKinds(bad); err == nil {
			t.Errorf("parseKinds(%q): no error", bad)
		}
	}
}

func TestScenarios(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"loadgen", "-server", exe, "-kinds", "fast,sleep:1ms@9,sleep:1ms", "-conns", "4,1", "-callers", "3", "-poll_callers", "2"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range cfg.scenarios() {
		names = append(names, s.name("go"))
	}
	want := "go/fast/conns=4/callers=3 go/fast/conns=1/callers=3 go/sleep_1ms_9_callers/conns=4/callers=9 go/sleep_1ms_9_callers/conns=1/callers=9 " +
		"go/sleep_1ms/conns=4/callers=3 go/sleep_1ms/conns=1/callers=3 " +
		"go/longpoll/conns=4/callers=2 go/longpoll/conns=1/callers=2"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("scenarios\n%s, want\n%s", got, want)
	}
}

// Servers that share their CPUs with the load generator are an operating
// point of their own: their results go to a suite of their own, never
// beside the pinned servers' cells of the same names, whether sharing was
// asked for (-cpus off) or all the host allowed (one CPU, a pin refused).
func TestSharedCPUsHaveASuiteOfTheirOwn(t *testing.T) {
	pinned := placement.Placement{Server: cpuset.Set{0}, Client: cpuset.Set{1}}
	if got := resultsSuite(pinned); got != suite {
		t.Errorf("pinned: suite %s, want %s", got, suite)
	}
	for _, why := range []string{"-cpus off", "one usable CPU (0)", "sched_setaffinity: invalid argument"} {
		if got := resultsSuite(placement.Unpinned(why)); got != sharedCPUsSuite {
			t.Errorf("unpinned (%s): suite %s, want %s", why, got, sharedCPUsSuite)
		}
	}
}

func TestParseFlagsRefuses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{},
		{"-server", exe, "-rival", exe, "-rival_impl", "go"},
		{"-server", exe, "-conns", "0"},
		{"-server", exe, "-conns", "2,2"},
		{"-server", exe, "-callers", "0"},
		{"-server", exe, "-polls", "-1"},
		{"-server", exe, "-poll", "0s"},
		{"-server", exe, "-duration", "0s"},
		{"-server", exe, "-variant", "lisp_tuned=lisp:-fast_inline"}, // no -rival labelled lisp
		{"-server", exe, "-variant", "go=go:-x"},                     // a label taken
		{"-server", exe, "-variant_handlers", "fast,nap"},            // no such cell
	} {
		if _, err := parseFlags(append([]string{"loadgen"}, args...), io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// A -variant is the binary of -server or -rival with arguments added, a
// further server of its own label measured in the same turns.
func TestVariants(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"loadgen", "-server", exe, "-rival", exe,
		"-variant", "go_tuned=go:-num_stream_workers=4 -gc_percent=400", "-variant", "lisp_tuned=lisp:-fast_inline"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range cfg.servers {
		got = append(got, s.Label+":"+strings.Join(s.Args, " "))
	}
	if want := "go: lisp: go_tuned:-num_stream_workers=4 -gc_percent=400 lisp_tuned:-fast_inline"; strings.Join(got, " ") != want {
		t.Errorf("servers %q, want %q", strings.Join(got, " "), want)
	}
	// Every cell measures the variants, unless -variant_handlers names
	// the cells that do.
	for _, s := range cfg.scenarios() {
		if !cfg.measures(cfg.servers[2], s) {
			t.Errorf("%s: variant not measured without -variant_handlers", s.name("go_tuned"))
		}
	}
	cfg, err = parseFlags([]string{"loadgen", "-server", exe, "-rival", exe, "-variant", "lisp_tuned=lisp:-fast_inline",
		"-kinds", "fast,sleep:1ms", "-variant_handlers", "fast,longpoll"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var measured []string
	for _, s := range cfg.scenarios() {
		for _, spec := range cfg.servers {
			if cfg.measures(spec, s) {
				measured = append(measured, s.name(spec.Label))
			}
		}
	}
	if got, want := strings.Count(strings.Join(measured, " "), "lisp_tuned/"), 4; got != want ||
		strings.Contains(strings.Join(measured, " "), "lisp_tuned/sleep") || len(measured) != 6*2+4 {
		t.Errorf("measured %q: want lisp_tuned on fast and longpoll only (%d), and every default", measured, want)
	}
}
