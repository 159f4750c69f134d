// Package wire is the handler-cost service's contract, shared by the Go
// server and the load generator (the Lisp server, lisp/handlercost, follows
// the same): three raw unary methods, no protobuf schema.
//
//   - Fast answers at once;
//   - Sleep waits N µs without using a CPU, like a handler waiting on I/O;
//   - Spin keeps a CPU busy until N µs of wall time have passed.
//
// A request is N as 4 octets, big-endian and unsigned (an empty request is
// N = 0); N may be at most MaxMicros. The response echoes the request's 4
// octets. A request of another length, or over MaxMicros, is answered with
// INVALID_ARGUMENT.
package wire

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Service is the service's full name.
const Service = "handlercost.HandlerCost"

// The method names, and the paths a client calls.
const (
	Fast  = "Fast"
	Sleep = "Sleep"
	Spin  = "Spin"
)

// Path is the HTTP/2 path of a method of the service: "/handlercost.HandlerCost/Sleep".
func Path(method string) string { return "/" + Service + "/" + method }

// RequestSize is the length of a non-empty request.
const RequestSize = 4

// MaxMicros bounds N: a minute, so that no request holds a handler longer.
const MaxMicros = 60_000_000

// Encode is the request for a handler that takes d (rounded down to whole
// microseconds). It panics on a d over MaxMicros, a caller's mistake.
func Encode(d time.Duration) []byte {
	us := d.Microseconds()
	if us < 0 || us > MaxMicros {
		panic(fmt.Sprintf("wire: %v is not from 0 to %d µs", d, MaxMicros))
	}
	return binary.BigEndian.AppendUint32(nil, uint32(us))
}

// Decode is the duration a request asks for.
func Decode(req []byte) (time.Duration, error) {
	switch len(req) {
	case 0:
		return 0, nil
	case RequestSize:
	default:
		return 0, fmt.Errorf("a request is %d octets or none, got %d", RequestSize, len(req))
	}
	us := binary.BigEndian.Uint32(req)
	if us > MaxMicros {
		return 0, fmt.Errorf("%d µs is over the limit of %d", us, MaxMicros)
	}
	return time.Duration(us) * time.Microsecond, nil
}
