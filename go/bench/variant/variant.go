// Package variant is the load generators' -variant flag: a further server
// measured in the same turns as -server and -rival, which is the binary of
// one of them started with arguments of its own (its tuning flags, say),
// under a label of its own. So a tuned server is compared with its rivals
// within one action, and each is recorded in the results' environment.
package variant

import (
	"fmt"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Flag collects -variant values, each LABEL=IMPL:ARGS (ARGS
// space-separated, possibly empty after the colon).
type Flag []string

func (f *Flag) String() string { return strings.Join(*f, " ") }

// Set adds one value; Resolve checks it.
func (f *Flag) Set(s string) error {
	*f = append(*f, s)
	return nil
}

// Usage is the flag's help text.
const Usage = "a further server measured in the same turns, as `LABEL=IMPL:ARGS`: the binary of the " +
	"server labelled IMPL (-impl's or -rival_impl's) with its arguments and ARGS (space-separated) " +
	"added, recorded under LABEL; repeatable (a tuned server beside its rivals: lisp_tuned=lisp:-unary_inline)"

// Server is a server a load generator starts: its label in the results,
// its executable and arguments, and whether it is a variant.
type Server struct {
	Label   string
	Path    string
	Args    []string
	Variant bool
}

// parse splits LABEL=IMPL:ARGS.
func parse(s string) (label, impl string, args []string, err error) {
	label, rest, ok := strings.Cut(s, "=")
	impl, argString, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return "", "", nil, fmt.Errorf("%q: want LABEL=IMPL:ARGS, such as lisp_tuned=lisp:-unary_inline", s)
	}
	return label, impl, strings.Fields(argString), nil
}

// Resolve turns -variant values into servers: each is the server of known
// (the -server and -rival) labelled IMPL, its arguments followed by ARGS,
// under LABEL, which validLabel must accept and no other server may have.
// It returns every problem found.
func Resolve(values []string, known []Server, validLabel func(string) bool) ([]Server, []error) {
	if len(values) > 0 && len(known) == 0 {
		return nil, []error{fmt.Errorf("-variant needs -server")}
	}
	labels := map[string]Server{}
	for _, k := range known {
		labels[k.Label] = k
	}
	var out []Server
	var errs []error
	for _, v := range values {
		label, impl, args, err := parse(v)
		base, isKnown := labels[impl]
		_, taken := labels[label]
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("-variant %v", err))
		case !validLabel(label):
			errs = append(errs, fmt.Errorf("-variant %q: label %q: want letters, digits, '_', '.' or '-'", v, label))
		case isKnown && base.Variant:
			errs = append(errs, fmt.Errorf("-variant %q: %q is a variant itself: name -impl or -rival_impl", v, impl))
		case !isKnown:
			errs = append(errs, fmt.Errorf("-variant %q: %q is neither -impl nor -rival_impl", v, impl))
		case taken:
			errs = append(errs, fmt.Errorf("-variant %q: label %q is taken: each server needs a label of its own", v, label))
		default:
			s := Server{Label: label, Path: base.Path, Args: append(append([]string(nil), base.Args...), args...), Variant: true}
			out = append(out, s)
			labels[label] = s
		}
	}
	return out, errs
}

// ExtraPrefix is where the results' environment records the i-th server
// of a run's servers (the -server, the -rival if any, then the variants):
// the first unprefixed, the rival under "rival_", a variant under
// "variant_LABEL_".
func ExtraPrefix(i int, s Server) string {
	switch {
	case i == 0:
		return ""
	case !s.Variant:
		return schema.ExtraRivalPrefix
	}
	return schema.ExtraVariantPrefix + s.Label + "_"
}

// Record notes each server in extra, a results environment's: its name,
// the SHA-256 of its executable, and its arguments if any.
func Record(extra map[string]string, servers []Server) {
	for i, s := range servers {
		prefix := ExtraPrefix(i, s)
		extra[prefix+schema.ExtraServer] = schema.ServerName(s.Label, s.Path)
		extra[prefix+schema.ExtraServerSHA256] = schema.FileSHA256(s.Path)
		if len(s.Args) > 0 {
			extra[prefix+schema.ExtraServerArgs] = strings.Join(s.Args, " ")
		}
	}
}
