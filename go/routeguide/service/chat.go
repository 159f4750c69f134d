package service

import (
	"errors"
	"io"

	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// RouteChat answers each received note with every note stored earlier at the
// same location (oldest first), then stores the new note. Notes from all
// streams share one store, so concurrent chats see each other's notes; the
// store keeps only the most recent notes (see DefaultMaxNotesPerLocation).
func (s *Server) RouteChat(stream pb.RouteGuide_RouteChatServer) error {
	for {
		note, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			// Includes cancellation: Recv returns the stream's context error.
			return err
		}
		loc, err := pointFromProto("note.location", note.GetLocation())
		if err != nil {
			return err
		}
		// add copies the earlier notes under the store's lock, so the sends
		// below (which may block on flow control) never hold it.
		for _, earlier := range s.notes.add(loc, note) {
			if err := stream.Send(earlier); err != nil {
				return err
			}
		}
	}
}
