// Command kcp-bench compares the Kubernetes content types (JSON, YAML,
// protobuf, CBOR) against a real kcp server it starts on loopback: create,
// get and delete of a ConfigMap and a ClusterRole through client-go, and a
// serialization micro-benchmark of the same objects with Kubernetes' own
// serializers. See README.md for the method errors of the prior measurement
// (docs/prior-results.md) and how this avoids them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"

	// The suite's layout and goals, for the report this program prints.
	_ "github.com/grpcbench/grpcbench/go/kcpbench/reportlayout"
)

func main() {
	o, err := parseOptions(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(harness.ExitOK)
	}
	if err != nil {
		os.Exit(harness.ExitUsage)
	}
	ctx, stop := harness.SignalContext()
	defer stop()
	file, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kcp-bench:", err)
		os.Exit(harness.ExitFailed)
	}
	os.Exit(o.Finish(os.Stdout, os.Stderr, file, "github.com/grpcbench/grpcbench/go/kcpbench", ""))
}

// run measures what o asks for: the serialization micro-benchmark first
// (it needs no server), then the client scenarios against one kcp.
func run(ctx context.Context, o *options) (*schema.File, error) {
	// Pinned before the environment is read, so that it records the
	// GOMAXPROCS the measurement runs with.
	if err := o.Place.PinSelf(); err != nil {
		fmt.Fprintln(os.Stderr, "[kcpbench]", err)
	}
	file := schema.NewFile("kubernetes", o.Environment())
	o.Place.Record(file.Environment.Extra)
	if o.Serial {
		cases, err := codecCases(objectsFor(o.Kinds), o.Media)
		if err != nil {
			return nil, err
		}
		file.Results = append(file.Results, runSerialization(cases, o.Reps, o.SerBenchtime, os.Stderr)...)
	}
	if o.Client {
		results, err := runClients(ctx, o)
		if err != nil {
			return nil, err
		}
		file.Results = append(file.Results, results...)
	}
	return file, nil
}

// runClients starts kcp in a temporary root directory, runs every kind in
// every content type (the content types of a kind in turns), and stops kcp.
func runClients(ctx context.Context, o *options) ([]schema.Result, error) {
	dir, err := os.MkdirTemp("", "kcpbench-")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "[kcpbench] starting kcp in %s (about 30 s)\n", dir)
	kcp, err := startKCP(ctx, o.KCP, dir, o.KCPGates, o.Place.Server)
	if err != nil {
		return nil, err // the directory is kept: it has kcp's log
	}
	defer func() {
		if err := kcp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "[kcpbench] stopping kcp:", err)
		}
		if !o.KeepDir {
			os.RemoveAll(dir)
		}
	}()
	fmt.Fprintf(os.Stderr, "[kcpbench] kcp ready: %v\n", kcp.Args)
	p := clientPlan{
		Plan:        harness.Plan{Workers: o.Clients, Ops: o.Ops, Reps: o.Reps, Warmup: o.Warmup},
		ServerGates: o.KCPGates, ServerPID: kcp.PID(), ServerGroup: kcp.Cgroup(), ServerExited: kcp.ExitedEarly,
	}
	var results []schema.Result
	for _, k := range o.Kinds {
		results = append(results, runKind(ctx, kcp.Config, k, o.Media, p, os.Stderr)...)
		if ctx.Err() != nil {
			return results, ctx.Err()
		}
	}
	return results, nil
}

// objectsFor picks the serialization objects of the chosen kinds.
func objectsFor(kinds []kind) []serialObject {
	var out []serialObject
	for _, k := range kinds {
		for _, s := range serialObjects {
			if s.Short == k.Short {
				out = append(out, s)
			}
		}
	}
	return out
}
