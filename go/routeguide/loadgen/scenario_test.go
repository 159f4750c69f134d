package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// stuckServer accepts GetFeature calls and never answers them.
type stuckServer struct {
	pb.UnimplementedRouteGuideServer
}

func (stuckServer) GetFeature(ctx context.Context, _ *pb.Point) (*pb.Feature, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// startStuckServer serves stuckServer on a loopback port for the rest of
// the test, and returns its address.
func startStuckServer(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterRouteGuideServer(srv, stuckServer{})
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func TestScenarioWithAStuckRPCIsCancelledAndFails(t *testing.T) {
	cfg := config{impl: "go", duration: 100 * time.Millisecond, conns: perClient,
		bench: harness.Flags{Reps: 1}}
	ss := &session{cfg: cfg, impl: "go", addr: startStuckServer(t), work: testWorkload(t, 10), stallGrace: 300 * time.Millisecond}
	start := time.Now()
	res := interleave(testContext(t), []*session{ss}, scenario{kind: unary, clients: 2})[0]
	if res.Status != schema.StatusError || !strings.Contains(res.Error, "probably stuck") {
		t.Errorf("result %s %q, want an error about a stuck RPC", res.Status, res.Error)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the stuck scenario took %v", d)
	}
}

func TestScenarioAgainstNoServerFails(t *testing.T) {
	// A port that was just free: nothing listens there.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()

	cfg := config{impl: "go", duration: 100 * time.Millisecond, conns: shared, bench: harness.Flags{Reps: 1}}
	ss := &session{cfg: cfg, impl: "go", addr: addr, work: testWorkload(t, 10), stallGrace: time.Second}
	ctx, cancel := context.WithTimeout(testContext(t), 500*time.Millisecond)
	defer cancel()
	res := interleave(ctx, []*session{ss}, scenario{kind: unary, clients: 1})[0]
	if res.Status != schema.StatusError || !strings.Contains(res.Error, "not ready") {
		t.Errorf("result %s %q, want a connection error", res.Status, res.Error)
	}
}

func TestTimeBudget(t *testing.T) {
	timed := harness.Plan{Duration: 2 * time.Second, Reps: 3, Warmup: harness.Warmup{Duration: time.Second}}
	if got, want := timeBudget(timed, time.Minute), 7*time.Second+time.Minute; got != want {
		t.Errorf("timed warm-up: budget %v, want %v", got, want)
	}
	counted := harness.Plan{Duration: time.Second, Reps: 1, Warmup: harness.Warmup{Ops: 500}}
	if got, want := timeBudget(counted, 0), countWarmupAllowance+time.Second; got != want {
		t.Errorf("counted warm-up: budget %v, want %v", got, want)
	}
}
