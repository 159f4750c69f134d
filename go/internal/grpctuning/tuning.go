// Package grpctuning is the knobs a team that tunes a grpc-go server for
// throughput reaches for, as command-line flags, off by default: the
// benchmarks' go_tuned servers turn them on, so that a tuned Go server
// stands beside the tuned Lisp one and defaults are compared with defaults.
package grpctuning

import (
	"flag"
	"fmt"
	"runtime/debug"

	"google.golang.org/grpc"
)

// Tuning holds the knobs; the zero value is not the defaults: Register
// sets them.
type Tuning struct {
	// numStreamWorkers serves streams on this many long-lived goroutines
	// instead of a goroutine each, which avoids growing a fresh goroutine's
	// stack per call (grpc.NumStreamWorkers; 0 keeps a goroutine per
	// stream).
	numStreamWorkers uint
	// sharedWriteBuffer releases each connection's write buffer once it is
	// flushed (grpc.SharedWriteBuffer).
	sharedWriteBuffer bool
	// readBufferSize and writeBufferSize size each connection's buffers
	// (-1 keeps grpc-go's 32 KiB).
	readBufferSize, writeBufferSize int
	// gcPercent is the collector's target, as GOGC sets it (0 keeps the
	// runtime's setting).
	gcPercent int
}

// Register adds the flags to fs, each defaulting to grpc-go's setting.
func (t *Tuning) Register(fs *flag.FlagSet) {
	fs.UintVar(&t.numStreamWorkers, "num_stream_workers", 0,
		"serve streams on `N` long-lived goroutines (grpc.NumStreamWorkers; 0: a goroutine per stream)")
	fs.BoolVar(&t.sharedWriteBuffer, "shared_write_buffer", false,
		"release each connection's write buffer after every flush (grpc.SharedWriteBuffer)")
	fs.IntVar(&t.readBufferSize, "read_buffer_size", -1, "each connection's read buffer in `octets` (-1: grpc-go's default)")
	fs.IntVar(&t.writeBufferSize, "write_buffer_size", -1, "each connection's write buffer in `octets` (-1: grpc-go's default)")
	fs.IntVar(&t.gcPercent, "gc_percent", 0, "the collector's target `percent`, as GOGC sets it (0: the runtime's setting)")
}

// Validate checks the flags' values.
func (t *Tuning) Validate() error {
	if t.numStreamWorkers > 1<<16 {
		return fmt.Errorf("-num_stream_workers %d exceeds %d", t.numStreamWorkers, 1<<16)
	}
	if t.readBufferSize < -1 || t.writeBufferSize < -1 {
		return fmt.Errorf("-read_buffer_size and -write_buffer_size must be -1 or more")
	}
	if t.gcPercent < 0 {
		return fmt.Errorf("-gc_percent must not be negative")
	}
	return nil
}

// Apply sets the runtime's part, and returns the server options for the rest.
func (t *Tuning) Apply() []grpc.ServerOption {
	if t.gcPercent > 0 {
		debug.SetGCPercent(t.gcPercent)
	}
	var opts []grpc.ServerOption
	if t.numStreamWorkers > 0 {
		opts = append(opts, grpc.NumStreamWorkers(uint32(t.numStreamWorkers)))
	}
	if t.sharedWriteBuffer {
		opts = append(opts, grpc.SharedWriteBuffer(true))
	}
	if t.readBufferSize >= 0 {
		opts = append(opts, grpc.ReadBufferSize(t.readBufferSize))
	}
	if t.writeBufferSize >= 0 {
		opts = append(opts, grpc.WriteBufferSize(t.writeBufferSize))
	}
	return opts
}
