package service

import (
	"slices"
	"sync"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// Bounds on the notes RouteChat remembers. The upstream example keeps every
// note forever, which makes a long benchmark's memory grow without limit, so
// this store keeps only the newest DefaultMaxNotesPerLocation notes at each
// location and at most DefaultMaxLocations locations, evicting the location
// that was first stored longest ago. Memory is therefore bounded by
// locations x notes-per-location x note size (itself capped by gRPC's
// receive-message limit, 4 MiB by default); with benchmark-sized notes of a
// few dozen bytes the defaults stay in the low megabytes.
//
// The echo semantics are unchanged while a location holds fewer notes than
// the bound; past it, a client sees the newest DefaultMaxNotesPerLocation
// earlier notes rather than all of them.
const (
	DefaultMaxNotesPerLocation = 32
	DefaultMaxLocations        = 4096
)

// noteStore is the mutex-guarded, bounded note history shared by all
// RouteChat streams.
type noteStore struct {
	maxPerLocation int
	maxLocations   int

	mu    sync.Mutex
	byLoc map[features.Point][]*pb.RouteNote
	order []features.Point // locations in first-stored order, for eviction
}

func newNoteStore(maxPerLocation, maxLocations int) *noteStore {
	return &noteStore{
		maxPerLocation: maxPerLocation,
		maxLocations:   maxLocations,
		byLoc:          make(map[features.Point][]*pb.RouteNote),
	}
}

// add stores note at loc and returns the notes stored there before it,
// oldest first. The returned slice is a copy the caller may use without the
// lock; the notes themselves are never modified after being stored, so
// several streams may send the same message concurrently.
func (s *noteStore) add(loc features.Point, note *pb.RouteNote) []*pb.RouteNote {
	s.mu.Lock()
	defer s.mu.Unlock()

	notes, known := s.byLoc[loc]
	earlier := slices.Clone(notes)
	if !known {
		if len(s.byLoc) >= s.maxLocations {
			oldest := s.order[0]
			s.order = s.order[1:]
			delete(s.byLoc, oldest)
		}
		s.order = append(s.order, loc)
	}
	if len(notes) < s.maxPerLocation {
		notes = append(notes, note)
	} else {
		// Drop the oldest in place so the slice never outgrows the bound.
		copy(notes, notes[1:])
		notes[len(notes)-1] = note
	}
	s.byLoc[loc] = notes
	return earlier
}
