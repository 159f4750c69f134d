// Package service implements the RouteGuide gRPC service over a features
// database. It follows the semantics of grpc-go's route_guide example so that
// benchmark numbers stay comparable with other implementations, and adds the
// input validation and memory bounds a long-running benchmark server needs.
package service

import (
	"context"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// Server implements pb.RouteGuideServer. Create it with New; it is safe for
// concurrent use by any number of RPCs.
type Server struct {
	pb.UnimplementedRouteGuideServer

	db    *features.DB
	notes *noteStore
}

var _ pb.RouteGuideServer = (*Server)(nil)

// New returns a Server answering from db, with the RouteChat note store bounds
// set by opts (see WithNoteLimits).
func New(db *features.DB, opts ...Option) *Server {
	cfg := config{
		maxNotesPerLocation: DefaultMaxNotesPerLocation,
		maxLocations:        DefaultMaxLocations,
	}
	for _, o := range opts {
		o(&cfg)
	}
	return &Server{db: db, notes: newNoteStore(cfg.maxNotesPerLocation, cfg.maxLocations)}
}

// Option configures a Server.
type Option func(*config)

type config struct {
	maxNotesPerLocation int
	maxLocations        int
}

// WithNoteLimits overrides the RouteChat note store bounds. Values below 1 are
// raised to 1 so the echo semantics keep working.
func WithNoteLimits(perLocation, locations int) Option {
	return func(c *config) {
		c.maxNotesPerLocation = max(perLocation, 1)
		c.maxLocations = max(locations, 1)
	}
}

// GetFeature returns the feature at the requested point, or a feature with an
// empty name (and the requested location) when the database has none there.
func (s *Server) GetFeature(_ context.Context, p *pb.Point) (*pb.Feature, error) {
	pt, err := pointFromProto("point", p)
	if err != nil {
		return nil, err
	}
	if f, ok := s.db.Lookup(pt); ok {
		return featureToProto(f), nil
	}
	return &pb.Feature{Location: pointToProto(pt)}, nil
}

// ListFeatures streams every database entry inside the rectangle, whichever
// corners the client sent as lo and hi. Like grpc-go's example it includes
// entries with an empty name.
func (s *Server) ListFeatures(rect *pb.Rectangle, stream pb.RouteGuide_ListFeaturesServer) error {
	r, err := rectFromProto(rect)
	if err != nil {
		return err
	}
	ctx := stream.Context()
	for f := range s.db.Within(r) {
		// Send fails on its own once the stream is cancelled, but only
		// after flow control lets it try; checking first stops a cancelled
		// stream without encoding another message.
		if err := ctx.Err(); err != nil {
			return contextError(err)
		}
		if err := stream.Send(featureToProto(f)); err != nil {
			return err
		}
	}
	return nil
}
