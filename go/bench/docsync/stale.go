package docsync

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// A document's figures are of the servers its artifacts measured, and each
// artifact records their binaries' SHA-256 (schema.ExtraServerSHA256, and
// the same key after the rival's and each variant's prefix). When the
// current build makes none of those binaries any more, the figures are of
// code that no longer exists: the artifact is stale, however well the
// document matches it.

// Servers are the server binaries the current build makes: name and the
// hex SHA-256 of each.
type Servers map[string]string

// ServerDigests computes Servers from the binaries' paths, given as
// NAME=PATH.
func ServerDigests(namedPaths []string) (Servers, error) {
	s := Servers{}
	for _, np := range namedPaths {
		name, path, ok := strings.Cut(np, "=")
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("%q: want NAME=PATH", np)
		}
		if _, err := os.Stat(path); err != nil {
			return nil, err
		}
		if s[name] = schema.FileSHA256(path); s[name] == "" {
			return nil, fmt.Errorf("%s: cannot read %s", name, path)
		}
	}
	return s, nil
}

// StaleServer is a server an artifact measured whose binary the current
// build no longer makes, or a variant it ran with arguments the benchmarks
// no longer pass.
type StaleServer struct {
	Key    string // the digest's (or the arguments') key in the artifact's environment.extra
	Server string // its description there ("lisp server")
	Digest string
	// Args and WantArgs, for a variant: what the artifact ran it with, and
	// what the benchmarks pass today.
	Args, WantArgs string
}

func (s StaleServer) String() string {
	if s.Key != "" && strings.HasSuffix(s.Key, schema.ExtraServerArgs) {
		return fmt.Sprintf("%s with %q (%s), where the benchmarks now pass %q", s.Server, s.Args, s.Key, s.WantArgs)
	}
	return fmt.Sprintf("%s %s (%s)", s.Server, short(s.Digest), s.Key)
}

// Staleness is what an artifact's recorded servers say of it.
type Staleness struct {
	Artifact string
	Stale    []StaleServer
	// Unchecked: the artifact records no server digest at all, so its
	// staleness cannot be told from it.
	Unchecked bool
}

// Current reports whether the artifact was checked and found current.
func (s Staleness) Current() bool { return !s.Unchecked && len(s.Stale) == 0 }

// Message says why the artifact is stale, naming it, each server it
// measured that the build no longer makes, and the servers it makes.
func (s Staleness) Message(current Servers) string {
	if s.Unchecked {
		return s.Artifact + ": records no server digest; its staleness cannot be checked"
	}
	var parts []string
	for _, st := range s.Stale {
		parts = append(parts, st.String())
	}
	var now []string
	for _, name := range slices.Sorted(maps.Keys(current)) {
		now = append(now, name+" "+short(current[name]))
	}
	return fmt.Sprintf("%s is stale: it measured %s, which the current build no longer makes or runs that way (it makes %s); "+
		"its figures are of servers since changed",
		s.Artifact, strings.Join(parts, ", "), strings.Join(now, ", "))
}

// Stale checks the artifact at path against the current build's servers:
// every server digest it recorded must be one of theirs, and so must every
// client digest (a client whose code is measured too, as a CRI listing's
// decoding is). A variant it ran (variant_LABEL_server_args) that
// variantArgs names, as SUITE:LABEL, must have run with the arguments given
// there, the tuning the benchmarks pass today; SUITE names that suite and
// the suites named SUITE_* ("routeguide" covers "routeguide_quota"), since
// each suite's benchmarks pass tunings of their own.
func Stale(path string, current Servers, variantArgs map[string]string) (Staleness, error) {
	f, err := schema.ReadFile(path)
	if err != nil {
		return Staleness{}, err
	}
	made := map[string]bool{}
	for _, d := range current {
		made[d] = true
	}
	st := Staleness{Artifact: path, Unchecked: true}
	extra := f.Environment.Extra
	for _, key := range slices.Sorted(maps.Keys(extra)) {
		name, ok := digestName(key)
		if !ok || extra[key] == "" {
			continue
		}
		st.Unchecked = false
		if !made[extra[key]] {
			server := extra[name]
			st.Stale = append(st.Stale, StaleServer{Key: key, Server: server, Digest: extra[key]})
		}
	}
	for _, key := range slices.Sorted(maps.Keys(variantArgs)) {
		suite, label, _ := strings.Cut(key, ":")
		if f.Suite != suite && !strings.HasPrefix(f.Suite, suite+"_") {
			continue
		}
		prefix := schema.ExtraVariantPrefix + label + "_"
		// A variant run with no arguments records none (variant.Record).
		if extra[prefix+schema.ExtraServer] == "" {
			continue
		}
		if args := extra[prefix+schema.ExtraServerArgs]; args != variantArgs[key] {
			st.Stale = append(st.Stale, StaleServer{Key: prefix + schema.ExtraServerArgs,
				Server: extra[prefix+schema.ExtraServer], Args: args, WantArgs: variantArgs[key]})
		}
	}
	return st, nil
}

// ParseVariantArgs parses variants' arguments given as SUITE:LABEL=ARGS
// pairs separated by semicolons ("routeguide:go_tuned=-a -b;routeguide:lisp_tuned=-c").
func ParseVariantArgs(list string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(list, ";") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		key, args, ok := strings.Cut(pair, "=")
		suite, label, scoped := strings.Cut(key, ":")
		if !ok || !scoped || suite == "" || label == "" {
			return nil, fmt.Errorf("%q: want SUITE:LABEL=ARGS", pair)
		}
		out[key] = args
	}
	return out, nil
}

// Artifacts are the artifacts the document at path shows, each once, as
// paths joined to the document's directory.
func Artifacts(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if m := beginPattern.FindStringSubmatch(l); m != nil {
			if a := filepath.Join(filepath.Dir(path), m[1]); !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out, nil
}

// digestName is the key that names the binary whose digest key holds: a
// server's (any prefix) or the client's.
func digestName(key string) (string, bool) {
	if key == schema.ExtraClientSHA256 {
		return schema.ExtraClient, true
	}
	if prefix, ok := strings.CutSuffix(key, schema.ExtraServerSHA256); ok {
		return prefix + schema.ExtraServer, true
	}
	return "", false
}

func short(digest string) string { return digest[:min(12, len(digest))] }
