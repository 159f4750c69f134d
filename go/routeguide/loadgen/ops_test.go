package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testWorkload(t *testing.T, streamMsgs int) *workload {
	t.Helper()
	w, err := newWorkload(streamMsgs, newChatSpots())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func dialTest(t *testing.T, addr string, clients int, mode connMode) []pb.RouteGuideClient {
	t.Helper()
	cs, closeConns, err := dial(testContext(t), addr, clients, mode, &transport{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeConns)
	return cs
}

func TestOpsSucceedAgainstTheRealService(t *testing.T) {
	addr := startTestServer(t, features.Default())
	w := testWorkload(t, 10)
	wantMsgs := map[rpcKind]int{
		unary:           1,
		serverStreaming: 100,     // the whole standard database
		clientStreaming: 10,      // points sent
		bidiStreaming:   10 + 45, // notes sent, plus 0+1+...+9 replies
	}
	for _, mode := range []connMode{perClient, shared} {
		clients := dialTest(t, addr, 2, mode)
		for _, kind := range []rpcKind{unary, serverStreaming, clientStreaming, bidiStreaming} {
			op := newOp(kind, w, clients)
			for i := range 6 {
				worker := i % 2
				msgs, err := op(testContext(t), worker)
				if err != nil {
					t.Fatalf("%s, %s, worker %d, call %d: %v", mode, kind, worker, i+1, err)
				}
				if msgs != wantMsgs[kind] {
					t.Errorf("%s, %s: %d messages, want %d", mode, kind, msgs, wantMsgs[kind])
				}
			}
		}
	}
}

func TestOpsReportWrongAnswersAsErrors(t *testing.T) {
	addr := startBrokenServer(t)
	clients := dialTest(t, addr, 1, perClient)
	w := testWorkload(t, 10)
	wantErr := map[rpcKind]string{
		unary:           `GetFeature: got "Somewhere else"`,
		serverStreaming: "ListFeatures: got 1 features, want 100",
		clientStreaming: "RecordRoute: summary counts 10 points and",
		bidiStreaming:   "RouteChat: got 9 replies to 10 notes, want 45",
	}
	for kind, want := range wantErr {
		_, err := newOp(kind, w, clients)(testContext(t), 0)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s against a broken server: error %v, want one containing %q", kind, err, want)
		}
	}
}

func TestOpsReportFailedCalls(t *testing.T) {
	addr := startTestServer(t, features.Default())
	clients := dialTest(t, addr, 1, perClient)
	w := testWorkload(t, 10)
	ctx, cancel := context.WithCancel(testContext(t))
	cancel()
	for _, kind := range []rpcKind{unary, serverStreaming, clientStreaming, bidiStreaming} {
		if _, err := newOp(kind, w, clients)(ctx, 0); err == nil || !strings.Contains(err.Error(), kind.method()) {
			t.Errorf("%s with a cancelled context: error %v, want one naming %s", kind, err, kind.method())
		}
	}
}

func TestWorkloadMatchesTheStandardDatabase(t *testing.T) {
	w := testWorkload(t, 7)
	if w.listed != listedFeatures {
		t.Errorf("ListFeatures area holds %d features, but listedFeatures is %d", w.listed, listedFeatures)
	}
	if w.knownName != "Berkshire Valley Management Area Trail, Jefferson, NJ, USA" {
		t.Errorf("GetFeature point is %q", w.knownName)
	}
	if len(w.route) != 7 {
		t.Fatalf("route has %d points, want 7", len(w.route))
	}
	for _, p := range w.route {
		if _, ok := features.Default().Lookup(features.Point{Latitude: p.Latitude, Longitude: p.Longitude}); !ok {
			t.Errorf("route point %v is not a database location, so RecordRoute's feature count would differ", p)
		}
	}
	for kind, want := range map[rpcKind]int{unary: 1, serverStreaming: 100, clientStreaming: 7, bidiStreaming: 7} {
		if got := w.msgsPerCall(kind); got != want {
			t.Errorf("msgsPerCall(%s) = %d, want %d", kind, got, want)
		}
	}
}

func TestChatRepliesFor(t *testing.T) {
	for _, tc := range []struct{ n, perLocation, want int }{
		{1, 32, 0},
		{2, 32, 1},
		{10, 32, 45},
		{33, 32, 528},        // the last note still sees all 32 earlier ones
		{40, 32, 528 + 7*32}, // later notes see only the newest 32
		{10, 1, 9},           // a store of one note per location
	} {
		if got := chatRepliesFor(tc.n, tc.perLocation); got != tc.want {
			t.Errorf("chatRepliesFor(%d, %d) = %d, want %d", tc.n, tc.perLocation, got, tc.want)
		}
	}
}

func TestChatSpotsAreFreshAndValid(t *testing.T) {
	s := newChatSpots()
	seen := map[features.Point]bool{}
	for range 1000 {
		p := s.next()
		pt := features.Point{Latitude: p.Latitude, Longitude: p.Longitude}
		if !pt.Valid() || seen[pt] {
			t.Fatalf("next() = %v: invalid or repeated", p)
		}
		seen[pt] = true
	}
	// The latitude wraps at the northern limit instead of overflowing.
	s.used.Store(2 * features.MaxLatitude)
	if p := s.next(); p.Latitude != features.MaxLatitude {
		t.Errorf("last latitude before wrapping is %d", p.Latitude)
	}
	if p := s.next(); p.Latitude != -features.MaxLatitude {
		t.Errorf("latitude after wrapping is %d", p.Latitude)
	}
}
