package main

import (
	"fmt"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// variantsFlag collects -variant values: LABEL=IMPL:ARGS, a further server
// measured in the same turns as -server and -rival, which is the binary of
// the server labelled IMPL started with ARGS (a tuning flag, say), under
// LABEL. So a tuned server is compared with its rivals within one action.
type variantsFlag []string

func (v *variantsFlag) String() string { return strings.Join(*v, " ") }

func (v *variantsFlag) Set(s string) error {
	*v = append(*v, s)
	return nil
}

// parseVariant splits LABEL=IMPL:ARGS.
func parseVariant(s string) (label, impl string, args []string, err error) {
	label, rest, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", nil, fmt.Errorf("%q: want LABEL=IMPL:ARGS, such as lisp_tuned=lisp:-unary_inline", s)
	}
	impl, argString, ok := strings.Cut(rest, ":")
	if !ok {
		return "", "", nil, fmt.Errorf("%q: want LABEL=IMPL:ARGS, such as lisp_tuned=lisp:-unary_inline", s)
	}
	return label, impl, strings.Fields(argString), nil
}

// completeVariants resolves the -variant values against the servers
// labelled by -impl and -rival_impl.
func (cfg *config) completeVariants(values []string, fail func(string, ...any)) {
	if len(values) > 0 && cfg.serverPath == "" {
		fail("-variant needs -server")
		return
	}
	labels := map[string]serverSpec{cfg.impl: {cfg.impl, cfg.serverPath, cfg.serverArgs}}
	if cfg.rival.path != "" {
		labels[cfg.rival.impl] = cfg.rival
	}
	for _, v := range values {
		label, impl, args, err := parseVariant(v)
		base, known := labels[impl]
		switch {
		case err != nil:
			fail("-variant %v", err)
		case !implPattern.MatchString(label):
			fail("-variant %q: label %q: want letters, digits, '_', '.' or '-'", v, label)
		case !known:
			fail("-variant %q: %q is neither -impl nor -rival_impl", v, impl)
		case labelTaken(labels, label):
			fail("-variant %q: label %q is taken: each server needs a label of its own", v, label)
		default:
			spec := serverSpec{impl: label, path: base.path, args: append(append([]string(nil), base.args...), args...)}
			cfg.variants = append(cfg.variants, spec)
			labels[label] = spec
		}
	}
}

func labelTaken(labels map[string]serverSpec, label string) bool {
	_, ok := labels[label]
	return ok
}

// serverExtraPrefix is where the results' environment records the i-th
// server of cfg.servers(): the first unprefixed, the rival under "rival_",
// a variant under "variant_LABEL_".
func (cfg config) serverExtraPrefix(i int, srv serverSpec) string {
	switch {
	case i == 0:
		return ""
	case cfg.rival.path != "" && i == 1:
		return schema.ExtraRivalPrefix
	}
	return schema.ExtraVariantPrefix + srv.impl + "_"
}
