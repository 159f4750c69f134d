package rgclient

import (
	"bytes"
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	"github.com/grpcbench/grpcbench/go/routeguide/service"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// serve starts the real service on a loopback port and returns a client for
// it and a func that stops the server.
func serve(t *testing.T) (pb.RouteGuideClient, func()) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterRouteGuideServer(srv, service.New(features.Default()))
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewRouteGuideClient(conn), srv.Stop
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestRunAll(t *testing.T) {
	c, _ := serve(t)
	var out bytes.Buffer
	err := Run(testCtx(t), c, &out, Config{RPC: "all", Points: 10, Seed: 1, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("Run: %v\noutput:\n%s", err, &out)
	}
	report := out.String()
	for _, want := range []string{
		`GetFeature (409146138, -746188906): "Berkshire Valley Management Area Trail, Jefferson, NJ, USA"`,
		"GetFeature (0, 0): no feature",
		"ListFeatures lo=(400000000, -750000000) hi=(420000000, -730000000): 100 features (64 named)",
		"RecordRoute sent 10 points: point_count=10 feature_count=10 distance=",
		"RouteChat sent 6 notes, received 3",
		`"First message" at (0, 1)`,
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q; report:\n%s", want, report)
		}
	}
}

func TestRunSingleRPC(t *testing.T) {
	c, _ := serve(t)
	for rpc, want := range map[string]string{
		"get": "GetFeature", "list": "ListFeatures", "record": "RecordRoute", "chat": "RouteChat",
	} {
		var out bytes.Buffer
		if err := Run(testCtx(t), c, &out, Config{RPC: rpc, Points: 3}); err != nil {
			t.Fatalf("Run %s: %v", rpc, err)
		}
		for _, other := range []string{"GetFeature", "ListFeatures", "RecordRoute", "RouteChat"} {
			if got := strings.Contains(out.String(), other); got != (other == want) {
				t.Errorf("-rpc %s: report mentions %s = %v; report:\n%s", rpc, other, got, &out)
			}
		}
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	c, _ := serve(t)
	if err := Run(testCtx(t), c, &bytes.Buffer{}, Config{RPC: "nope"}); err == nil {
		t.Error("Run with unknown RPC succeeded")
	}
	if err := Run(testCtx(t), c, &bytes.Buffer{}, Config{RPC: "record", Points: -1}); err == nil {
		t.Error("Run with negative points succeeded")
	}
}

func TestRunReportsRPCErrors(t *testing.T) {
	c, stop := serve(t)
	stop()
	err := Run(testCtx(t), c, &bytes.Buffer{}, Config{RPC: "all", Timeout: 5 * time.Second})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "GetFeature") {
		t.Errorf("Run against a stopped server: %v; want Unavailable naming GetFeature", err)
	}
}

func TestRunHonoursTimeout(t *testing.T) {
	// A listener that accepts TCP but never speaks HTTP/2 makes the RPC
	// wait until its deadline.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	start := time.Now()
	err = Run(testCtx(t), pb.NewRouteGuideClient(conn), &bytes.Buffer{},
		Config{RPC: "get", Timeout: 300 * time.Millisecond})
	if status.Code(err) != codes.DeadlineExceeded && status.Code(err) != codes.Unavailable {
		t.Errorf("error = %v, want DeadlineExceeded or Unavailable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %v with a 300ms per-RPC timeout", d)
	}
}

func TestRouteIsDeterministic(t *testing.T) {
	a, b := Route(20, 7), Route(20, 7)
	if !slices.EqualFunc(a, b, func(x, y *pb.Point) bool { return proto.Equal(x, y) }) {
		t.Error("Route(20, 7) differs between calls")
	}
	if slices.EqualFunc(a, Route(20, 8), func(x, y *pb.Point) bool { return proto.Equal(x, y) }) {
		t.Error("Route ignores its seed")
	}
	for _, p := range a {
		if _, ok := features.Default().Lookup(features.Point{Latitude: p.Latitude, Longitude: p.Longitude}); !ok {
			t.Errorf("route point %v is not a database location", p)
		}
	}
	if len(Route(0, 1)) != 0 {
		t.Error("Route(0) is not empty")
	}
}
