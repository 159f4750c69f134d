package variant

import (
	"regexp"
	"strings"
	"testing"
)

var label = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`).MatchString

// A variant is the binary of a labelled server with arguments added,
// under a label of its own; every malformed value is refused, each with
// its reason.
func TestResolve(t *testing.T) {
	known := []Server{{Label: "go", Path: "/bin/go-server"}, {Label: "lisp", Path: "/bin/lisp-server", Args: []string{"-x"}}}
	got, errs := Resolve([]string{"lisp_tuned=lisp:-unary_inline", "go_gc=go:-gc 50", "bare=go:"}, known, label)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(got) != 3 || got[0].Label != "lisp_tuned" || got[0].Path != "/bin/lisp-server" ||
		strings.Join(got[0].Args, " ") != "-x -unary_inline" || !got[0].Variant ||
		got[1].Path != "/bin/go-server" || strings.Join(got[1].Args, " ") != "-gc 50" || len(got[2].Args) != 0 {
		t.Errorf("servers %+v", got)
	}
	for _, tc := range []struct{ value, want string }{
		{"lisp_tuned", "want LABEL=IMPL:ARGS"},
		{"lisp_tuned=lisp", "want LABEL=IMPL:ARGS"},
		{"lisp tuned=lisp:-a", "label"},
		{"lisp_tuned=rust:-a", "neither -impl nor -rival_impl"},
		{"lisp=go:-a", `label "lisp" is taken`},
	} {
		if _, errs := Resolve([]string{tc.value}, known, label); len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%q: errors %v, want one about %q", tc.value, errs, tc.want)
		}
	}
	// A variant of a variant, or two with one label, are refused too.
	if _, errs := Resolve([]string{"a=go:-1", "b=a:-2", "a=lisp:-3"}, known, label); len(errs) != 2 {
		t.Errorf("errors %v, want two", errs)
	}
	if _, errs := Resolve([]string{"t=go:-a"}, nil, label); len(errs) != 1 || !strings.Contains(errs[0].Error(), "-variant needs -server") {
		t.Errorf("without a server: %v", errs)
	}
}

// Each server is recorded under its own keys: the first unprefixed, the
// rival under rival_, a variant under variant_LABEL_.
func TestRecord(t *testing.T) {
	extra := map[string]string{}
	Record(extra, []Server{{Label: "go", Path: "/nonexistent/server"}, {Label: "lisp", Path: "/nonexistent/lisp"},
		{Label: "lisp_tuned", Path: "/nonexistent/lisp", Args: []string{"-fast_inline"}, Variant: true}})
	for key, want := range map[string]string{
		"server":                         "go server",
		"rival_server":                   "lisp server",
		"variant_lisp_tuned_server":      "lisp_tuned server (lisp)",
		"variant_lisp_tuned_server_args": "-fast_inline",
	} {
		if extra[key] != want {
			t.Errorf("extra[%q] = %q, want %q (all: %v)", key, extra[key], want, extra)
		}
	}
	if _, ok := extra["server_args"]; ok {
		t.Errorf("arguments recorded for a server without any: %v", extra)
	}
}
