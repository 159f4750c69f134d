package service

import (
	"errors"
	"io"
	"math"
	"time"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// RecordRoute consumes the client's points and answers with a summary: the
// number of points, how many of them are database locations, the distance
// travelled and the elapsed whole seconds since the stream started.
func (s *Server) RecordRoute(stream pb.RouteGuide_RecordRouteServer) error {
	start := time.Now()
	var (
		points, found int64
		distance      int64
		last          features.Point
	)
	for {
		p, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&pb.RouteSummary{
				PointCount:   saturate(points),
				FeatureCount: saturate(found),
				Distance:     saturate(distance),
				ElapsedTime:  saturate(int64(time.Since(start).Seconds())),
			})
		}
		if err != nil {
			// Includes cancellation: Recv returns the stream's context error.
			return err
		}
		pt, err := pointFromProto("point", p)
		if err != nil {
			return err
		}
		// Counted like grpc-go's example: any database entry at the point,
		// named or not.
		if _, ok := s.db.Lookup(pt); ok {
			found++
		}
		if points > 0 {
			distance += int64(distanceMeters(last, pt))
		}
		last = pt
		points++
	}
}

// distanceMeters is the great-circle distance between two points, by the
// haversine formula, truncated to whole metres per leg exactly as grpc-go's
// example does so that summaries match across implementations.
func distanceMeters(p1, p2 features.Point) int32 {
	const (
		e7          = 1e7
		earthRadius = 6371000.0 // metres
	)
	rad := func(e7deg int32) float64 { return float64(e7deg) / e7 * math.Pi / 180 }
	lat1, lat2 := rad(p1.Latitude), rad(p2.Latitude)
	dLat := lat2 - lat1
	dLng := rad(p2.Longitude) - rad(p1.Longitude)
	a := math.Sin(dLat/2)*math.Sin(dLat/2) +
		math.Cos(lat1)*math.Cos(lat2)*math.Sin(dLng/2)*math.Sin(dLng/2)
	c := 2 * math.Atan2(math.Sqrt(a), math.Sqrt(1-a))
	return int32(earthRadius * c)
}

// saturate clamps a running total into the int32 summary fields: a long
// benchmark stream can exceed 2^31 metres, and wrapping to a negative value
// would be worse than reporting the maximum.
func saturate(v int64) int32 {
	return int32(min(v, math.MaxInt32))
}
