package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	"k8s.io/client-go/rest"
)

// serverCPU is kcp's CPU, and its cgroups' counters where it has any.
func (p clientPlan) serverCPU() *harness.ProcessCPU {
	return harness.NewServerCPU(p.ServerPID, p.ServerGroup)
}

// clientPlan is what every client scenario shares.
type clientPlan struct {
	Plan         harness.Plan
	ServerGates  string // kcp's --feature-gates
	ServerPID    int
	ServerGroup  *cgroup.Group // kcp's control groups, or nil
	ServerExited func() error
}

// clientCell is one kind in one content type against kcp: its clientset
// once the content type is checked on the wire, and its repetitions so far.
type clientCell struct {
	scenario string
	params   map[string]any
	op       harness.Op
	warmed   bool
	reps     []harness.Rep
	err      error // the first failure; nothing more is measured after it
}

// newClientCell prepares create+get+delete of kind k in one content type.
// Before anything is measured, it checks on the wire that the content type
// is really used both ways (verifyWire), so that a mis-configured client
// fails its cell instead of measuring JSON.
func newClientCell(ctx context.Context, base *rest.Config, k kind, media string, p clientPlan) *clientCell {
	c := &clientCell{scenario: k.Benchmark + "/" + media, params: map[string]any{
		"benchmark": k.Benchmark, "content_type": media, "accept": media, "object": k.Short,
		"clients": p.Plan.Workers, "n": p.Plan.Ops,
		"rate_limiter":          "none (QPS=-1)",
		"server":                "kcp",
		"server_feature_gates":  p.ServerGates,
		"client_feature_gates":  clientFeatureGates(),
		"requests_per_op":       3,
		"wire_checked_requests": 0,
		"order":                 "content types in turns",
	}}
	checked, err := verifyWire(ctx, base, k, media)
	if err != nil {
		c.err = fmt.Errorf("content type not used on the wire: %w", err)
		return c
	}
	c.params["wire_checked_requests"] = checked
	cs, err := newClientset(base, media)
	if err != nil {
		c.err = err
		return c
	}
	var seq atomic.Int64
	c.op = func(ctx context.Context, worker int) (int, error) {
		name := fmt.Sprintf("kcpbench-%s-%s-%d", k.Short, formatNames[media], seq.Add(1))
		return 1, k.cycle(ctx, cs, name)
	}
	return c
}

// runKind measures kind k in every content type, the content types taking
// turns repetition by repetition (harness.InTurns: a balanced order, none
// always first or always after the same one), so that kcp's warming, its
// storage's growth and the host's drift fall on all of them alike. Each
// cell warms up before its first turn.
func runKind(ctx context.Context, base *rest.Config, k kind, media []string, p clientPlan, progress io.Writer) []schema.Result {
	cells := make([]*clientCell, len(media))
	for i, m := range media {
		cells[i] = newClientCell(ctx, base, k, m, p)
	}
	harness.InTurns(len(cells), p.Plan.Reps, func(i, round int) {
		c := cells[i]
		if c.err != nil || ctx.Err() != nil {
			return
		}
		plan := p.Plan
		plan.Reps = 1
		if c.warmed {
			plan.Warmup = harness.Warmup{}
		}
		c.warmed = true
		r := &harness.Runner{
			Suite: "kubernetes", Scenario: harness.TurnLabel(c.scenario, round, p.Plan.Reps), Plan: plan,
			Progress: progress, Server: p.serverCPU(),
		}
		reps, err := r.Run(ctx, c.op)
		c.reps = append(c.reps, reps...)
		if exit := p.ServerExited(); exit != nil {
			err = errors.Join(err, exit)
		}
		c.err = err
	})
	out := make([]schema.Result, len(cells))
	for i, c := range cells {
		if c.op == nil {
			out[i] = harness.ErrorResult(c.scenario, c.params, c.err)
			continue
		}
		out[i] = harness.Result(c.scenario, c.params, c.reps, c.err)
	}
	return out
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
