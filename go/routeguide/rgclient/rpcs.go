// Package rgclient drives the four RouteGuide RPCs against any
// pb.RouteGuideClient and writes a short human-readable report of each to an
// io.Writer. The command-line client uses it for its report; a load
// generator can call the same functions with io.Discard.
package rgclient

import (
	"context"
	"errors"
	"fmt"
	"io"

	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// GetFeature looks up the feature at p and reports it.
func GetFeature(ctx context.Context, c pb.RouteGuideClient, w io.Writer, p *pb.Point) (*pb.Feature, error) {
	f, err := c.GetFeature(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("GetFeature %s: %w", fmtPoint(p), err)
	}
	if f.GetName() == "" {
		fmt.Fprintf(w, "GetFeature %s: no feature\n", fmtPoint(p))
	} else {
		fmt.Fprintf(w, "GetFeature %s: %q\n", fmtPoint(p), f.GetName())
	}
	return f, nil
}

// ListFeatures collects the features inside r and reports how many arrived.
func ListFeatures(ctx context.Context, c pb.RouteGuideClient, w io.Writer, r *pb.Rectangle) ([]*pb.Feature, error) {
	fail := func(err error) error {
		return fmt.Errorf("ListFeatures lo=%s hi=%s: %w", fmtPoint(r.GetLo()), fmtPoint(r.GetHi()), err)
	}
	stream, err := c.ListFeatures(ctx, r)
	if err != nil {
		return nil, fail(err)
	}
	var got []*pb.Feature
	named := 0
	for {
		f, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return got, fail(err)
		}
		if f.GetName() != "" {
			named++
		}
		got = append(got, f)
	}
	fmt.Fprintf(w, "ListFeatures lo=%s hi=%s: %d features (%d named)\n",
		fmtPoint(r.GetLo()), fmtPoint(r.GetHi()), len(got), named)
	return got, nil
}

// RecordRoute streams points and reports the server's summary.
func RecordRoute(ctx context.Context, c pb.RouteGuideClient, w io.Writer, points []*pb.Point) (*pb.RouteSummary, error) {
	fail := func(err error) error { return fmt.Errorf("RecordRoute (%d points): %w", len(points), err) }
	stream, err := c.RecordRoute(ctx)
	if err != nil {
		return nil, fail(err)
	}
	for _, p := range points {
		// io.EOF means the server ended the RPC early; CloseAndRecv
		// returns the status that says why.
		if err := stream.Send(p); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fail(err)
		}
	}
	sum, err := stream.CloseAndRecv()
	if err != nil {
		return nil, fail(err)
	}
	fmt.Fprintf(w, "RecordRoute sent %d points: point_count=%d feature_count=%d distance=%d m elapsed_time=%d s\n",
		len(points), sum.GetPointCount(), sum.GetFeatureCount(), sum.GetDistance(), sum.GetElapsedTime())
	return sum, nil
}

// maxNotesShown keeps the chat report short when a long-lived server has
// accumulated many notes at the demo locations.
const maxNotesShown = 10

// RouteChat sends notes while concurrently receiving the server's echoes
// (sending and receiving together avoids a flow-control deadlock when both
// directions carry many messages), and reports what came back.
func RouteChat(ctx context.Context, c pb.RouteGuideClient, w io.Writer, notes []*pb.RouteNote) ([]*pb.RouteNote, error) {
	fail := func(err error) error { return fmt.Errorf("RouteChat (%d notes): %w", len(notes), err) }
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the sender if we return on a receive error

	stream, err := c.RouteChat(ctx)
	if err != nil {
		return nil, fail(err)
	}
	sendErr := make(chan error, 1)
	go func() {
		for _, n := range notes {
			if err := stream.Send(n); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- stream.CloseSend()
	}()

	var got []*pb.RouteNote
	for {
		n, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return got, fail(err)
		}
		got = append(got, n)
	}
	// io.EOF from Send means the stream ended first; Recv already reported
	// the outcome, which was success if we got here.
	if err := <-sendErr; err != nil && !errors.Is(err, io.EOF) {
		return got, fail(err)
	}

	fmt.Fprintf(w, "RouteChat sent %d notes, received %d\n", len(notes), len(got))
	for i, n := range got {
		if i == maxNotesShown {
			fmt.Fprintf(w, "  ... and %d more\n", len(got)-maxNotesShown)
			break
		}
		fmt.Fprintf(w, "  %q at %s\n", n.GetMessage(), fmtPoint(n.GetLocation()))
	}
	return got, nil
}

func fmtPoint(p *pb.Point) string {
	if p == nil {
		return "(nil)"
	}
	return fmt.Sprintf("(%d, %d)", p.GetLatitude(), p.GetLongitude())
}
