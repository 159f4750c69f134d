package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"k8s.io/client-go/rest"
)

// clientPlan is what every client scenario shares.
type clientPlan struct {
	Plan         harness.Plan
	ServerGates  string // kcp's --feature-gates
	ServerPID    int
	ServerExited func() error
}

// runClientScenario measures create+get+delete of one kind in one content
// type against kcp. Before measuring, it checks on the wire that the
// content type is really used both ways (verifyWire), so that a
// mis-configured client fails the scenario instead of measuring JSON.
func runClientScenario(ctx context.Context, base *rest.Config, k kind, media string, p clientPlan, progress io.Writer) schema.Result {
	scenario := k.Benchmark + "/" + media
	params := map[string]any{
		"benchmark": k.Benchmark, "content_type": media, "accept": media, "object": k.Short,
		"clients": p.Plan.Workers, "n": p.Plan.Ops,
		"rate_limiter":          "none (QPS=-1)",
		"server":                "kcp",
		"server_feature_gates":  p.ServerGates,
		"client_feature_gates":  clientFeatureGates(),
		"requests_per_op":       3,
		"wire_checked_requests": 0,
	}
	checked, err := verifyWire(ctx, base, k, media)
	if err != nil {
		return harness.ErrorResult(scenario, params, fmt.Errorf("content type not used on the wire: %w", err))
	}
	params["wire_checked_requests"] = checked

	cs, err := newClientset(base, media)
	if err != nil {
		return harness.ErrorResult(scenario, params, err)
	}
	var seq atomic.Int64
	r := &harness.Runner{
		Suite: "kubernetes", Scenario: scenario, Plan: p.Plan, Progress: progress,
		Server: harness.NewProcessCPU(p.ServerPID),
	}
	reps, err := r.Run(ctx, func(ctx context.Context, worker int) (int, error) {
		name := fmt.Sprintf("kcpbench-%s-%s-%d", k.Short, formatNames[media], seq.Add(1))
		return 1, k.cycle(ctx, cs, name)
	})
	if exit := p.ServerExited(); exit != nil {
		err = errors.Join(err, exit)
	}
	return harness.Result(scenario, params, reps, err)
}

// verifyWire runs one create+get+delete through a recording client built
// exactly as the benchmark's clients are, and checks every exchange. It
// returns how many requests it checked.
func verifyWire(ctx context.Context, base *rest.Config, k kind, media string) (int, error) {
	xs, err := recordCycle(ctx, base, k, media, "kcpbench-wire-"+k.Short+"-"+formatNames[media])
	if err != nil {
		return 0, err
	}
	if len(xs) != 3 {
		return 0, fmt.Errorf("recorded %d requests, want 3 (create, get, delete)", len(xs))
	}
	var errs []string
	for _, x := range xs {
		if err := checkExchange(x, media); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return 0, errors.New(strings.Join(errs, "; "))
	}
	return len(xs), nil
}

// recordCycle runs one cycle of k with a client whose transport records
// every exchange, and returns them.
func recordCycle(ctx context.Context, base *rest.Config, k kind, media, name string) ([]exchange, error) {
	rec := &recorder{}
	withRec := rest.CopyConfig(base)
	withRec.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		rec.next = rt
		return rec
	})
	cs, err := newClientset(withRec, media)
	if err != nil {
		return nil, err
	}
	if err := k.cycle(ctx, cs, name); err != nil {
		return rec.Exchanges(), err
	}
	return rec.Exchanges(), nil
}
