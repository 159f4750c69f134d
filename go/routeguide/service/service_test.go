package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// Known entries of the embedded database.
var (
	berkshire = &pb.Point{Latitude: 409146138, Longitude: -746188906}
	mendham   = &pb.Point{Latitude: 407838351, Longitude: -746143763}
	whippany  = &pb.Point{Latitude: 408122808, Longitude: -743999179}
)

const berkshireName = "Berkshire Valley Management Area Trail, Jefferson, NJ, USA"

// testEnv is a real gRPC server on a loopback port and a client connected to
// it. handlerErrs receives the error each streaming handler returned, which
// lets tests observe the server side of a cancelled stream.
type testEnv struct {
	client      pb.RouteGuideClient
	handlerErrs chan error
}

func start(t *testing.T, db *features.DB, opts ...Option) *testEnv {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env := &testEnv{handlerErrs: make(chan error, 64)}
	srv := grpc.NewServer(grpc.StreamInterceptor(
		func(s any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			err := h(s, ss)
			select {
			case env.handlerErrs <- err:
			default: // nobody is watching; never block the server
			}
			return err
		}))
	pb.RegisterRouteGuideServer(srv, New(db, opts...))
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	env.client = pb.NewRouteGuideClient(conn)
	return env
}

// testCtx bounds every RPC so a broken server fails the test instead of
// hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wantCode(t *testing.T, err error, code codes.Code, msgPart string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code || !strings.Contains(st.Message(), msgPart) {
		t.Errorf("got error %v, want code %v with message containing %q", err, code, msgPart)
	}
}

func TestGetFeature(t *testing.T) {
	env := start(t, features.Default())
	ctx := testCtx(t)

	f, err := env.client.GetFeature(ctx, berkshire)
	if err != nil {
		t.Fatal(err)
	}
	if f.GetName() != berkshireName || f.GetLocation().GetLatitude() != berkshire.Latitude {
		t.Errorf("GetFeature(berkshire) = %v", f)
	}

	unknown := &pb.Point{Latitude: 1, Longitude: 2}
	f, err = env.client.GetFeature(ctx, unknown)
	if err != nil {
		t.Fatal(err)
	}
	if f.GetName() != "" || f.GetLocation().GetLatitude() != 1 || f.GetLocation().GetLongitude() != 2 {
		t.Errorf("GetFeature(unknown) = %v, want unnamed feature at the point", f)
	}
}

func TestGetFeatureRejectsOutOfRange(t *testing.T) {
	env := start(t, features.Default())
	ctx := testCtx(t)
	for _, tc := range []struct {
		p    *pb.Point
		want string
	}{
		{&pb.Point{Latitude: 900000001}, "latitude 900000001 out of range"},
		{&pb.Point{Latitude: -900000001}, "latitude -900000001 out of range"},
		{&pb.Point{Longitude: 1800000001}, "longitude 1800000001 out of range"},
	} {
		_, err := env.client.GetFeature(ctx, tc.p)
		wantCode(t, err, codes.InvalidArgument, tc.want)
	}
	// The bounds themselves are legal.
	if _, err := env.client.GetFeature(ctx, &pb.Point{Latitude: -900000000, Longitude: 1800000000}); err != nil {
		t.Errorf("GetFeature at the bounds: %v", err)
	}
}

func listAll(ctx context.Context, c pb.RouteGuideClient, r *pb.Rectangle) ([]*pb.Feature, error) {
	stream, err := c.ListFeatures(ctx, r)
	if err != nil {
		return nil, err
	}
	var out []*pb.Feature
	for {
		f, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
}

func TestListFeatures(t *testing.T) {
	env := start(t, features.Default())
	ctx := testCtx(t)

	lo := &pb.Point{Latitude: 400000000, Longitude: -750000000}
	hi := &pb.Point{Latitude: 405000000, Longitude: -740000000}
	for name, r := range map[string]*pb.Rectangle{
		"ordered": {Lo: lo, Hi: hi},
		"swapped": {Lo: hi, Hi: lo},
	} {
		got, err := listAll(ctx, env.client, r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != 22 {
			t.Errorf("%s: %d features, want 22", name, len(got))
		}
		for _, f := range got {
			if l := f.GetLocation(); l.GetLatitude() < lo.Latitude || l.GetLatitude() > hi.Latitude ||
				l.GetLongitude() < lo.Longitude || l.GetLongitude() > hi.Longitude {
				t.Errorf("%s: feature %v outside the rectangle", name, f)
			}
		}
	}

	all, err := listAll(ctx, env.client, &pb.Rectangle{
		Lo: &pb.Point{Latitude: 400000000, Longitude: -750000000},
		Hi: &pb.Point{Latitude: 420000000, Longitude: -730000000},
	})
	if err != nil || len(all) != 100 {
		t.Errorf("whole area: %d features, err %v; want 100", len(all), err)
	}
}

func TestListFeaturesRejectsBadRectangle(t *testing.T) {
	env := start(t, features.Default())
	ctx := testCtx(t)

	// A nil rectangle arrives as an empty message, so the server sees no
	// corners at all.
	_, err := listAll(ctx, env.client, nil)
	wantCode(t, err, codes.InvalidArgument, "rectangle.lo is required")

	_, err = listAll(ctx, env.client, &pb.Rectangle{Lo: berkshire})
	wantCode(t, err, codes.InvalidArgument, "rectangle.hi is required")

	_, err = listAll(ctx, env.client, &pb.Rectangle{Lo: berkshire, Hi: &pb.Point{Latitude: 1e9}})
	wantCode(t, err, codes.InvalidArgument, "rectangle.hi: latitude")

	// A nil message can only reach the handler in-process, never over the
	// wire, but the check keeps a direct caller from a nil dereference.
	if _, err := rectFromProto(nil); status.Code(err) != codes.InvalidArgument {
		t.Errorf("rectFromProto(nil) = %v, want InvalidArgument", err)
	}
}

// bigDB returns a database with more features than fit in the transport's
// flow-control window, so a server streaming all of them to a client that
// does not read must block in Send.
func bigDB(t *testing.T, n int) *features.DB {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"location":{"latitude":%d,"longitude":0},"name":"feature number %d"}`, i, i)
	}
	b.WriteString("]")
	db, err := features.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestListFeaturesStopsWhenCancelled(t *testing.T) {
	env := start(t, bigDB(t, 20000))
	ctx, cancel := context.WithCancel(testCtx(t))
	stream, err := env.client.ListFeatures(ctx, &pb.Rectangle{
		Lo: &pb.Point{Latitude: 0}, Hi: &pb.Point{Latitude: 20000},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-env.handlerErrs:
		if c := status.Code(err); c != codes.Canceled && c != codes.Unavailable {
			t.Errorf("handler returned %v, want a cancellation error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ListFeatures handler still running 5s after the client cancelled")
	}
}

func recordRoute(ctx context.Context, c pb.RouteGuideClient, pts ...*pb.Point) (*pb.RouteSummary, error) {
	stream, err := c.RecordRoute(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range pts {
		if err := stream.Send(p); err != nil {
			break // the real error comes from CloseAndRecv
		}
	}
	return stream.CloseAndRecv()
}

func TestRecordRoute(t *testing.T) {
	env := start(t, features.Default())
	ctx := testCtx(t)

	// Three database features; leg lengths 14546 m and 18327 m by the
	// haversine formula, computed independently of this code.
	sum, err := recordRoute(ctx, env.client, berkshire, mendham, whippany)
	if err != nil {
		t.Fatal(err)
	}
	if sum.GetPointCount() != 3 || sum.GetFeatureCount() != 3 || sum.GetDistance() != 14546+18327 {
		t.Errorf("summary = %v, want 3 points, 3 features, 32873 m", sum)
	}

	// One degree of latitude along a meridian and back: 2 x 111194 m, and
	// no features on the way.
	sum, err = recordRoute(ctx, env.client,
		&pb.Point{}, &pb.Point{Latitude: 1e7}, &pb.Point{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.GetPointCount() != 3 || sum.GetFeatureCount() != 0 || sum.GetDistance() != 2*111194 {
		t.Errorf("summary = %v, want 3 points, 0 features, 222388 m", sum)
	}

	sum, err = recordRoute(ctx, env.client)
	if err != nil || sum.GetPointCount() != 0 || sum.GetDistance() != 0 {
		t.Errorf("empty route: summary %v, err %v; want zeros", sum, err)
	}
}

func TestRecordRouteElapsedTime(t *testing.T) {
	env := start(t, features.Default())
	ctx := testCtx(t)
	stream, err := env.client.RecordRoute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(berkshire); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	sum, err := stream.CloseAndRecv()
	if err != nil {
		t.Fatal(err)
	}
	if sum.GetElapsedTime() != 1 {
		t.Errorf("elapsed_time = %d, want 1", sum.GetElapsedTime())
	}
}

func TestRecordRouteRejectsBadPoint(t *testing.T) {
	env := start(t, features.Default())
	_, err := recordRoute(testCtx(t), env.client, berkshire, &pb.Point{Longitude: -1800000001})
	wantCode(t, err, codes.InvalidArgument, "point: longitude -1800000001 out of range")
}

func TestRecordRouteStopsWhenCancelled(t *testing.T) {
	env := start(t, features.Default())
	ctx, cancel := context.WithCancel(testCtx(t))
	stream, err := env.client.RecordRoute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(berkshire); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-env.handlerErrs:
		if status.Code(err) != codes.Canceled {
			t.Errorf("handler returned %v, want Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RecordRoute handler still running 5s after the client cancelled")
	}
}

type note struct {
	lat     int32
	message string
}

// chat sends the notes (all at longitude 0), half-closes, and returns the
// messages of every note received, in order.
func chat(ctx context.Context, c pb.RouteGuideClient, notes ...note) ([]string, error) {
	stream, err := c.RouteChat(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		if err := stream.Send(&pb.RouteNote{Location: &pb.Point{Latitude: n.lat}, Message: n.message}); err != nil {
			break // the real error comes from Recv
		}
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	var got []string
	for {
		n, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, n.GetMessage())
	}
}

func TestRouteChatEchoesEarlierNotes(t *testing.T) {
	env := start(t, features.Default())
	ctx := testCtx(t)

	got, err := chat(ctx, env.client,
		note{1, "first"}, note{2, "second"}, note{1, "third"}, note{1, "fourth"}, note{2, "fifth"})
	if err != nil {
		t.Fatal(err)
	}
	// third echoes first; fourth echoes first and third; fifth echoes second.
	if want := "first,first,third,second"; strings.Join(got, ",") != want {
		t.Errorf("received %q, want %q", got, want)
	}

	// Notes persist across streams: a new chat at location 2 sees both
	// earlier notes there.
	got, err = chat(ctx, env.client, note{2, "sixth"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "second,fifth"; strings.Join(got, ",") != want {
		t.Errorf("second stream received %q, want %q", got, want)
	}
}

func TestRouteChatBoundsStoredNotes(t *testing.T) {
	env := start(t, features.Default(), WithNoteLimits(2, 2))
	ctx := testCtx(t)

	// Only the newest two notes per location are kept.
	got, err := chat(ctx, env.client, note{1, "a"}, note{1, "b"}, note{1, "c"}, note{1, "d"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a,a,b,b,c"; strings.Join(got, ",") != want {
		t.Errorf("received %q, want %q", got, want)
	}

	// Storing a third location evicts the oldest (1); then a new note at 1
	// evicts 2, leaving 3 intact.
	got, err = chat(ctx, env.client, note{2, "x"}, note{3, "y"}, note{1, "z"}, note{3, "w"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "y"; strings.Join(got, ",") != want {
		t.Errorf("received %q, want %q", got, want)
	}
}

func TestRouteChatRejectsNoteWithoutLocation(t *testing.T) {
	env := start(t, features.Default())
	stream, err := env.client.RouteChat(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&pb.RouteNote{Message: "nowhere"}); err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	wantCode(t, err, codes.InvalidArgument, "note.location is required")
}

func TestDistanceMeters(t *testing.T) {
	p := features.Point{Latitude: 409146138, Longitude: -746188906}
	if d := distanceMeters(p, p); d != 0 {
		t.Errorf("distance to self = %d", d)
	}
	// Antipodes: half the Earth's circumference, pi * 6371 km.
	if d := distanceMeters(features.Point{}, features.Point{Longitude: 1800000000}); d != 20015086 {
		t.Errorf("distance to antipode = %d, want 20015086", d)
	}
	if saturate(1<<40) != 1<<31-1 {
		t.Error("saturate must clamp to MaxInt32")
	}
}
