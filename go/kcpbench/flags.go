package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/placement"
)

// options are kcp-bench's flags.
type options struct {
	harness.Flags
	KCP          string   // -kcp: the kcp binary
	KCPGates     string   // -kcp_feature_gates
	Media        []string // -content_types
	Kinds        []kind   // -objects
	Ops          int64    // -n: create+get+delete cycles per repetition
	Clients      int      // -clients
	Client       bool     // -client: run the client benchmark (needs kcp)
	Serial       bool     // -serialization
	SerBenchtime string   // -ser_benchtime
	KeepDir      bool     // -keep: keep kcp's root directory
	CPUs         string   // -cpus
	// Place is -cpus resolved: kcp on the server's CPUs, this process (the
	// clients, and the serialization micro-benchmark) on the others.
	Place placement.Placement
}

// parseOptions parses args; on a bad flag it prints the problem and the
// usage to out and returns the error (flag.ErrHelp for -h).
func parseOptions(args []string, out io.Writer) (*options, error) {
	o := &options{Flags: harness.Flags{Reps: 3, Warmup: harness.Warmup{Ops: 20}}}
	fs := flag.NewFlagSet("kcp-bench", flag.ContinueOnError)
	fs.SetOutput(out)
	o.Register(fs)
	fs.StringVar(&o.KCP, "kcp", "", "the kcp `binary` to start (required with -client)")
	fs.StringVar(&o.KCPGates, "kcp_feature_gates", serverFeatureGates, "kcp's --feature-gates")
	media := fs.String("content_types", "json,yaml,protobuf,cbor", "content types to compare, comma-separated")
	objects := fs.String("objects", "cm,rbac", "objects: cm (ConfigMap), rbac (ClusterRole), comma-separated")
	fs.Int64Var(&o.Ops, "n", 200, "create+get+delete cycles per repetition (3 requests each)")
	fs.IntVar(&o.Clients, "clients", 1, "concurrent clients")
	fs.BoolVar(&o.Client, "client", true, "run the client benchmark against kcp")
	fs.BoolVar(&o.Serial, "serialization", true, "run the serialization micro-benchmark")
	fs.StringVar(&o.SerBenchtime, "ser_benchtime", "200ms", "time (200ms) or count (1000x) per serialization case and repetition")
	fs.StringVar(&o.CPUs, "cpus", placement.Auto, placement.Usage+" (kcp is the server)")
	fs.BoolVar(&o.KeepDir, "keep", false, "keep kcp's root directory (data, log) after the run")
	if err := o.Flags.Parse(fs, args); err != nil {
		return nil, err
	}
	err := o.finish(*media, *objects)
	if err != nil {
		fmt.Fprintln(out, err)
		fs.Usage()
	}
	return o, err
}

func (o *options) finish(media, objects string) error {
	var errs []error
	spec, err := placement.Parse(o.CPUs)
	if err != nil {
		errs = append(errs, fmt.Errorf("-cpus: %w", err))
	}
	o.Place = spec.Resolve()
	if o.Media, err = parseMediaTypes(media); err != nil {
		errs = append(errs, err)
	}
	for _, s := range strings.Split(objects, ",") {
		i := slices.IndexFunc(allKinds, func(k kind) bool { return k.Short == strings.TrimSpace(s) })
		if i < 0 {
			errs = append(errs, fmt.Errorf("-objects: unknown object %q, want cm or rbac", s))
			continue
		}
		o.Kinds = append(o.Kinds, allKinds[i])
	}
	if o.Ops < 1 {
		errs = append(errs, fmt.Errorf("-n must be at least 1, got %d", o.Ops))
	}
	if o.Clients < 1 {
		errs = append(errs, fmt.Errorf("-clients must be at least 1, got %d", o.Clients))
	}
	if !o.Client && !o.Serial {
		errs = append(errs, errors.New("nothing to run: -client=false and -serialization=false"))
	}
	if o.Client && o.KCP == "" {
		errs = append(errs, errors.New("-kcp is required for the client benchmark (or -client=false)"))
	}
	if o.Serial {
		if err := setBenchtime(o.SerBenchtime); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
