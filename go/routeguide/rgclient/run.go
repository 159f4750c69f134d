package rgclient

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// RPC names accepted by Config.RPC. "all" runs the others in this order.
var RPCNames = []string{"all", "get", "list", "record", "chat"}

// Config selects what Run does.
type Config struct {
	RPC     string        // one of RPCNames
	Points  int           // points sent by RecordRoute
	Seed    uint64        // seeds the RecordRoute route, so runs are repeatable
	Timeout time.Duration // deadline for each RPC; 0 means none beyond ctx
}

// Demo inputs, the same as the upstream example client uses, so the report
// can be compared with other implementations.
var (
	knownPoint   = &pb.Point{Latitude: 409146138, Longitude: -746188906}
	missingPoint = &pb.Point{Latitude: 0, Longitude: 0}
	demoArea     = &pb.Rectangle{
		Lo: &pb.Point{Latitude: 400000000, Longitude: -750000000},
		Hi: &pb.Point{Latitude: 420000000, Longitude: -730000000},
	}
)

func demoNotes() []*pb.RouteNote {
	note := func(lng int32, msg string) *pb.RouteNote {
		return &pb.RouteNote{Location: &pb.Point{Latitude: 0, Longitude: lng}, Message: msg}
	}
	return []*pb.RouteNote{
		note(1, "First message"), note(2, "Second message"), note(3, "Third message"),
		note(1, "Fourth message"), note(2, "Fifth message"), note(3, "Sixth message"),
	}
}

// Route returns n (>= 0) points picked from the embedded feature database by a
// generator seeded with seed: the same arguments give the same route, and
// every point is a database location, so RecordRoute's feature count is
// meaningful.
func Route(n int, seed uint64) []*pb.Point {
	all := slices.Collect(features.Default().All())
	rng := rand.New(rand.NewPCG(seed, seed))
	route := make([]*pb.Point, n)
	for i := range route {
		loc := all[rng.IntN(len(all))].Location
		route[i] = &pb.Point{Latitude: loc.Latitude, Longitude: loc.Longitude}
	}
	return route
}

// Run performs the RPCs cfg selects, reporting each to w, and stops at the
// first error.
func Run(ctx context.Context, c pb.RouteGuideClient, w io.Writer, cfg Config) error {
	if cfg.Points < 0 {
		return fmt.Errorf("negative point count %d", cfg.Points)
	}
	steps := map[string]func(context.Context) error{
		"get": func(ctx context.Context) error {
			if _, err := GetFeature(ctx, c, w, knownPoint); err != nil {
				return err
			}
			_, err := GetFeature(ctx, c, w, missingPoint)
			return err
		},
		"list": func(ctx context.Context) error {
			_, err := ListFeatures(ctx, c, w, demoArea)
			return err
		},
		"record": func(ctx context.Context) error {
			_, err := RecordRoute(ctx, c, w, Route(cfg.Points, cfg.Seed))
			return err
		},
		"chat": func(ctx context.Context) error {
			_, err := RouteChat(ctx, c, w, demoNotes())
			return err
		},
	}

	var order []string
	switch {
	case cfg.RPC == "all":
		order = RPCNames[1:]
	case steps[cfg.RPC] != nil:
		order = []string{cfg.RPC}
	default:
		return fmt.Errorf("unknown RPC %q (want one of %v)", cfg.RPC, RPCNames)
	}
	for _, name := range order {
		if err := withTimeout(ctx, cfg.Timeout, steps[name]); err != nil {
			return err
		}
	}
	return nil
}

func withTimeout(ctx context.Context, d time.Duration, f func(context.Context) error) error {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return f(ctx)
}
