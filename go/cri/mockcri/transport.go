package mockcri

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
)

// Transport is HTTP/2 tuning that a benchmark applies to both peers and to
// every listing method alike, so that methods compare under the same
// transport. The zero value is grpc-go's defaults, which kubelet and
// runtimes use.
type Transport struct {
	// Window is the initial flow-control window of each stream and of the
	// connection, in bytes. 0 keeps grpc-go's 64 KiB that its BDP
	// estimator then grows; a fixed window turns the estimator off.
	Window int32
	// Buffer is the size of each peer's socket read and write buffer,
	// in bytes; 0 keeps grpc-go's 32 KiB.
	Buffer int
	// Pool is the buffer pool of frames and of message encoding and
	// decoding: "" or PoolGRPC for grpc-go's default, or PoolPow2.
	Pool string
	// Codec encodes and decodes messages: "" or CodecProto for
	// protobuf-go, CodecCRIWire, or CodecFloor.
	Codec string
}

// Buffer pools, the values of Transport.Pool.
const (
	// PoolGRPC is grpc-go's default pool (v1.85): tiers of 256 B, 4 KiB,
	// 16 KiB, 32 KiB and 1 MiB, each buffer zeroed to its capacity when
	// taken. A message of 33 KiB to 1 MiB, such as a chunk of 16
	// containers (about 40 KiB), thus costs clearing a whole 1 MiB, on
	// the sender (the encoded message) and on the receiver (the message
	// gathered from its frames) alike.
	PoolGRPC = "grpc"
	// PoolPow2 is grpc-go's own tiered pool with a tier at every power of
	// two up to MaxMessageSize, still zeroing: no buffer is cleared
	// beyond twice its message.
	PoolPow2 = "pow2"
)

// Codecs, the values of Transport.Codec.
const (
	// CodecProto is protobuf-go for every message, as grpc-go's default
	// codec, kubelet and runtimes use it.
	CodecProto = "proto"
	// CodecCRIWire is criwire for container listings (List, Stream and
	// Chunked responses), protobuf-go for the rest. Same bytes on the
	// wire, so it pairs with a CodecProto peer.
	CodecCRIWire = "criwire"
	// CodecFloor sends and receives listings without encoding or decoding
	// a container (floor.go): grpc-go's own cost of carrying them, the
	// least any codec can reach. Its clients see empty containers, so it
	// is for measuring only, with a CodecFloor peer.
	CodecFloor = "floor"
)

// pow2Pool is PoolPow2, shared by every server and client of the process
// as grpc-go's default pool is.
var pow2Pool = func() mem.BufferPool {
	var exps []uint8
	for e := uint8(8); 1<<e <= MaxMessageSize; e++ {
		exps = append(exps, e)
	}
	p, err := mem.NewBinaryTieredBufferPool(exps...)
	if err != nil {
		panic(err) // exponents are well within 64 bits
	}
	return p
}()

// MinWindow is HTTP/2's initial window (RFC 9113 6.9.2), the smallest
// grpc-go accepts: it ignores smaller ones.
const MinWindow = 65535

// Validate reports tuning grpc-go would ignore or reject.
func (t Transport) Validate() error {
	if t.Window != 0 && t.Window < MinWindow {
		return fmt.Errorf("window must be 0 (grpc-go's default) or at least %d bytes, got %d", MinWindow, t.Window)
	}
	if t.Buffer < 0 {
		return fmt.Errorf("buffer must not be negative, got %d", t.Buffer)
	}
	if t.Pool != "" && t.Pool != PoolGRPC && t.Pool != PoolPow2 {
		return fmt.Errorf("pool must be %s or %s, got %q", PoolGRPC, PoolPow2, t.Pool)
	}
	if t.Codec != "" && t.Codec != CodecProto && t.Codec != CodecCRIWire && t.Codec != CodecFloor {
		return fmt.Errorf("codec must be %s, %s or %s, got %q", CodecProto, CodecCRIWire, CodecFloor, t.Codec)
	}
	return nil
}

// ServerOptions are t for a server. They always include the server's
// codec, which encodes with t's pool and passes through the messages that
// handlers encoded ahead.
func (t Transport) ServerOptions() []grpc.ServerOption {
	opts := []grpc.ServerOption{grpc.ForceServerCodecV2(t.codec())}
	if t.Window > 0 {
		opts = append(opts, grpc.InitialWindowSize(t.Window), grpc.InitialConnWindowSize(t.Window))
	}
	if t.Buffer > 0 {
		opts = append(opts, grpc.ReadBufferSize(t.Buffer), grpc.WriteBufferSize(t.Buffer))
	}
	if t.Pool == PoolPow2 {
		opts = append(opts, experimental.BufferPool(pow2Pool))
	}
	return opts
}

// DialOptions are t for a client.
func (t Transport) DialOptions() []grpc.DialOption {
	var opts []grpc.DialOption
	if t.Window > 0 {
		opts = append(opts, grpc.WithInitialWindowSize(t.Window), grpc.WithInitialConnWindowSize(t.Window))
	}
	if t.Buffer > 0 {
		opts = append(opts, grpc.WithReadBufferSize(t.Buffer), grpc.WithWriteBufferSize(t.Buffer))
	}
	if t.Pool == PoolPow2 {
		opts = append(opts, experimental.WithBufferPool(pow2Pool))
	}
	if t.Pool == PoolPow2 || t.Codec == CodecCRIWire || t.Codec == CodecFloor {
		opts = append(opts, grpc.WithDefaultCallOptions(grpc.ForceCodecV2(t.codec())))
	}
	return opts
}

// codec returns the codec of t's Codec with t's pool for messages.
func (t Transport) codec() codec {
	c := codec{pool: mem.DefaultBufferPool(), listings: t.Codec == CodecCRIWire}
	if t.Codec == CodecFloor {
		c.floor = floorChunks
	}
	if t.Pool == PoolPow2 {
		c.pool = pow2Pool
	}
	return c
}
