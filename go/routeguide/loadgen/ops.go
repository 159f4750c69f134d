package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/routeguide/features"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// The operations call the generated client directly rather than through
// rgclient's functions: those format a human-readable report of every
// call, which would add the formatting to the client CPU and allocations
// that the benchmark measures.
//
// Each operation returns the messages it carried (harness.Op) and an error
// when the call failed or its answer was not the expected one. Streaming
// calls run under their own cancellable context: returning early without
// cancelling would leave the stream open in the connection.

// newOp returns the operation of kind; worker i calls clients[i].
func newOp(kind rpcKind, w *workload, clients []pb.RouteGuideClient) harness.Op {
	switch kind {
	case unary:
		return func(ctx context.Context, worker int) (int, error) {
			return getFeature(ctx, clients[worker], w)
		}
	case serverStreaming:
		return func(ctx context.Context, worker int) (int, error) {
			return listFeatures(ctx, clients[worker], w)
		}
	case clientStreaming:
		return func(ctx context.Context, worker int) (int, error) {
			return recordRoute(ctx, clients[worker], w)
		}
	case bidiStreaming:
		return func(ctx context.Context, worker int) (int, error) {
			return routeChat(ctx, clients[worker], w)
		}
	}
	panic(fmt.Sprintf("unknown RPC kind %q", kind))
}

// getFeature looks up knownPoint: one request, one response.
func getFeature(ctx context.Context, c pb.RouteGuideClient, w *workload) (int, error) {
	f, err := c.GetFeature(ctx, knownPoint)
	if err != nil {
		return 0, fmt.Errorf("GetFeature: %w", err)
	}
	if f.GetName() != w.knownName || !samePoint(f.GetLocation(), knownPoint) {
		return 0, fmt.Errorf("GetFeature: got %q at %v, want %q at %v",
			f.GetName(), f.GetLocation(), w.knownName, knownPoint)
	}
	return 1, nil
}

// listFeatures streams the features in listArea; the messages are the
// features received.
func listFeatures(ctx context.Context, c pb.RouteGuideClient, w *workload) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.ListFeatures(ctx, listArea)
	if err != nil {
		return 0, fmt.Errorf("ListFeatures: %w", err)
	}
	got := 0
	for {
		f, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("ListFeatures, after %d features: %w", got, err)
		}
		loc := f.GetLocation()
		if loc == nil || !w.listRect.Contains(features.Point{Latitude: loc.Latitude, Longitude: loc.Longitude}) {
			return 0, fmt.Errorf("ListFeatures: feature %q at %v lies outside the requested rectangle", f.GetName(), loc)
		}
		got++
	}
	if got != w.listed {
		return 0, fmt.Errorf("ListFeatures: got %d features, want %d", got, w.listed)
	}
	return got, nil
}

// recordRoute streams the route's points and checks the summary; the
// messages are the points sent.
func recordRoute(ctx context.Context, c pb.RouteGuideClient, w *workload) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.RecordRoute(ctx)
	if err != nil {
		return 0, fmt.Errorf("RecordRoute: %w", err)
	}
	for _, p := range w.route {
		if err := stream.Send(p); err != nil {
			// io.EOF means the server ended the call early;
			// CloseAndRecv returns the status that says why.
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, fmt.Errorf("RecordRoute: %w", err)
		}
	}
	sum, err := stream.CloseAndRecv()
	if err != nil {
		return 0, fmt.Errorf("RecordRoute: %w", err)
	}
	// Every route point is a database location, so each one counts as a
	// feature too.
	want := int32(len(w.route))
	if sum.GetPointCount() != want || sum.GetFeatureCount() != want {
		return 0, fmt.Errorf("RecordRoute: summary counts %d points and %d features, want %d and %d",
			sum.GetPointCount(), sum.GetFeatureCount(), want, want)
	}
	return len(w.route), nil
}

// routeChat sends the notes to a fresh location while receiving the
// server's replies, and checks that exactly the expected replies came back;
// the messages are the notes sent plus those received.
//
// Sending runs in its own goroutine, concurrently with receiving, because
// the server may answer before it has read everything: with enough notes, a
// client that sent all before reading would fill both directions' HTTP/2
// flow-control windows and deadlock. The goroutine costs the same for every
// server, so comparisons stay fair.
func routeChat(ctx context.Context, c pb.RouteGuideClient, w *workload) (int, error) {
	spot := w.spots.next()
	notes := w.chatNotes(spot)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.RouteChat(ctx)
	if err != nil {
		return 0, fmt.Errorf("RouteChat: %w", err)
	}
	sent := make(chan error, 1)
	go func() {
		for _, n := range notes {
			if err := stream.Send(n); err != nil {
				sent <- err
				return
			}
		}
		sent <- stream.CloseSend()
	}()

	got, recvErr := receiveChat(stream, spot)
	if recvErr != nil {
		cancel() // unblocks a sender held up by flow control
	}
	sendErr := <-sent // the sender has finished with the stream
	switch {
	case recvErr != nil:
		return 0, fmt.Errorf("RouteChat, after %d replies: %w", got, recvErr)
	case sendErr != nil && !errors.Is(sendErr, io.EOF):
		// io.EOF from Send means the stream ended first, and Recv has
		// already reported how: successfully, if we got here.
		return 0, fmt.Errorf("RouteChat: sending: %w", sendErr)
	case got != w.chatReplies:
		return 0, fmt.Errorf("RouteChat: got %d replies to %d notes, want %d", got, len(notes), w.chatReplies)
	}
	return len(notes) + got, nil
}

// receiveChat reads replies until the server ends the stream; each must be
// at spot, the only location the call used.
func receiveChat(stream pb.RouteGuide_RouteChatClient, spot *pb.Point) (int, error) {
	got := 0
	for {
		n, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		if !samePoint(n.GetLocation(), spot) {
			return got, fmt.Errorf("reply %q is at %v, want %v", n.GetMessage(), n.GetLocation(), spot)
		}
		got++
	}
}

func samePoint(a, b *pb.Point) bool {
	return a != nil && b != nil && a.Latitude == b.Latitude && a.Longitude == b.Longitude
}
