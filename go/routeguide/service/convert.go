package service

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// pointFromProto validates a wire point. field names the point in the error
// message (e.g. "rectangle.lo") so a client can tell which input was wrong.
func pointFromProto(field string, p *pb.Point) (features.Point, error) {
	if p == nil {
		return features.Point{}, status.Errorf(codes.InvalidArgument, "%s is required", field)
	}
	pt := features.Point{Latitude: p.GetLatitude(), Longitude: p.GetLongitude()}
	if pt.Latitude < -features.MaxLatitude || pt.Latitude > features.MaxLatitude {
		return features.Point{}, status.Errorf(codes.InvalidArgument,
			"%s: latitude %d out of range [%d, %d] (E7 degrees)",
			field, pt.Latitude, int32(-features.MaxLatitude), int32(features.MaxLatitude))
	}
	if pt.Longitude < -features.MaxLongitude || pt.Longitude > features.MaxLongitude {
		return features.Point{}, status.Errorf(codes.InvalidArgument,
			"%s: longitude %d out of range [%d, %d] (E7 degrees)",
			field, pt.Longitude, int32(-features.MaxLongitude), int32(features.MaxLongitude))
	}
	return pt, nil
}

// rectFromProto validates a wire rectangle; the result is not yet normalized.
func rectFromProto(r *pb.Rectangle) (features.Rect, error) {
	if r == nil {
		return features.Rect{}, status.Error(codes.InvalidArgument, "rectangle is required")
	}
	lo, err := pointFromProto("rectangle.lo", r.GetLo())
	if err != nil {
		return features.Rect{}, err
	}
	hi, err := pointFromProto("rectangle.hi", r.GetHi())
	if err != nil {
		return features.Rect{}, err
	}
	return features.Rect{Lo: lo, Hi: hi}, nil
}

func pointToProto(p features.Point) *pb.Point {
	return &pb.Point{Latitude: p.Latitude, Longitude: p.Longitude}
}

func featureToProto(f features.Feature) *pb.Feature {
	return &pb.Feature{Name: f.Name, Location: pointToProto(f.Location)}
}

// contextError maps a context error to the matching gRPC status
// (Canceled or DeadlineExceeded) rather than the Unknown code a bare error
// would get.
func contextError(err error) error {
	return status.FromContextError(err).Err()
}
