package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	"github.com/grpcbench/grpcbench/go/routeguide/rgclient"
	"github.com/grpcbench/grpcbench/go/routeguide/service"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// The inputs of the operations are fixed, so that every answer is known in
// advance and checked: a server that answers wrongly, or not at all, shows
// up as errors, never as a fast run. The expected answers come from the
// standard feature database (features.Default), the one every RouteGuide
// server of this repository serves by default.
var (
	// knownPoint is the upstream example client's GetFeature point: a named
	// feature ("Berkshire Valley Management Area Trail, Jefferson, NJ, USA").
	knownPoint = &pb.Point{Latitude: 409146138, Longitude: -746188906}

	// listArea is the upstream example client's ListFeatures rectangle. It
	// covers every location of the standard database, so each call streams
	// all of it: listedFeatures features.
	listArea = &pb.Rectangle{
		Lo: &pb.Point{Latitude: 400000000, Longitude: -750000000},
		Hi: &pb.Point{Latitude: 420000000, Longitude: -730000000},
	}
)

// listedFeatures is how many features ListFeatures(listArea) streams from
// the standard database; a test keeps it in step with the database.
const listedFeatures = 100

// routeSeed fixes the RecordRoute route, so every run sends the same points.
const routeSeed = 1

// workload is what one scenario's operations send and expect back.
type workload struct {
	streamMsgs int // points per RecordRoute call, notes per RouteChat call

	knownName string        // GetFeature(knownPoint)'s name
	listRect  features.Rect // listArea, normalized, to check each feature
	listed    int           // features per ListFeatures call
	route     []*pb.Point   // RecordRoute's points, all database locations
	// chatReplies is how many notes the server sends back per RouteChat
	// call (see chatRepliesFor).
	chatReplies int
	chatText    []string // the notes' messages, made once
	spots       *chatSpots
}

// newWorkload prepares the inputs for calls that send streamMsgs messages.
// spots may be shared by several workloads (scenarios) of one run.
func newWorkload(streamMsgs int, spots *chatSpots) (*workload, error) {
	db := features.Default()
	known, ok := db.Lookup(features.Point{Latitude: knownPoint.Latitude, Longitude: knownPoint.Longitude})
	if !ok || known.Name == "" {
		return nil, fmt.Errorf("the standard database has no named feature at the GetFeature point")
	}
	rect := features.Rect{
		Lo: features.Point{Latitude: listArea.Lo.Latitude, Longitude: listArea.Lo.Longitude},
		Hi: features.Point{Latitude: listArea.Hi.Latitude, Longitude: listArea.Hi.Longitude},
	}.Normalize()
	listed := 0
	for range db.Within(rect) {
		listed++
	}
	text := make([]string, streamMsgs)
	for i := range text {
		text[i] = "note " + strconv.Itoa(i)
	}
	return &workload{
		streamMsgs:  streamMsgs,
		knownName:   known.Name,
		listRect:    rect,
		listed:      listed,
		route:       rgclient.Route(streamMsgs, routeSeed),
		chatReplies: chatRepliesFor(streamMsgs, service.DefaultMaxNotesPerLocation),
		chatText:    text,
		spots:       spots,
	}, nil
}

// msgsPerCall is what the "stream_msgs" parameter records: the messages one
// call carries in its streaming direction (1 for unary).
func (w *workload) msgsPerCall(kind rpcKind) int {
	switch kind {
	case serverStreaming:
		return w.listed
	case clientStreaming, bidiStreaming:
		return w.streamMsgs
	}
	return 1
}

// chatRepliesFor is the number of notes a RouteChat call gets back when it
// sends n notes to a location nobody used before. The server answers each
// note with the notes stored earlier at its location, and keeps at most
// perLocation of them, so note i brings back min(i, perLocation). Upstream
// servers keep every note; the two agree up to perLocation+1 notes per call
// (33 with this repository's server), which covers the default of 10.
func chatRepliesFor(n, perLocation int) int {
	total := 0
	for i := range n {
		total += min(i, perLocation)
	}
	return total
}

// chatSpots hands out RouteChat locations that no other call has used, so
// that each call's replies depend on that call alone: not on concurrent
// clients, earlier scenarios, or other runs against the same long-lived
// server. A location is this run's random longitude and a latitude counted
// up from the southern limit; after 1.8 billion calls the latitude wraps to
// locations the server has long evicted (it keeps a few thousand).
type chatSpots struct {
	longitude int32
	used      atomic.Int64
}

func newChatSpots() *chatSpots {
	return &chatSpots{longitude: int32(rand.Int64N(2*features.MaxLongitude+1) - features.MaxLongitude)}
}

// next returns a fresh location. Safe for concurrent use.
func (s *chatSpots) next() *pb.Point {
	n := s.used.Add(1) - 1
	lat := int32(n%(2*features.MaxLatitude+1)) - features.MaxLatitude
	return &pb.Point{Latitude: lat, Longitude: s.longitude}
}

// chatNotes returns the notes of one RouteChat call, all at spot. They are
// new messages each call: gRPC does not allow changing a message once it
// has been passed to Send.
func (w *workload) chatNotes(spot *pb.Point) []*pb.RouteNote {
	notes := make([]*pb.RouteNote, len(w.chatText))
	for i, text := range w.chatText {
		notes[i] = &pb.RouteNote{Location: spot, Message: text}
	}
	return notes
}
