package mockcri

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
)

// burstContainers is how many containers a streaming handler encodes
// before it sends their messages, back to back. grpc-go's writer goroutine
// flushes to the socket whenever it finds nothing more queued; a handler
// that encodes one message per Send is slower than that writer, so every
// message cost a write system call and a wake-up of the writer. Messages
// queued back to back are written together. 16 containers of realistic
// size (1 to 2.5 KiB each) fill grpc-go's 32 KiB write buffer.
const burstContainers = 16

// encoded is a message the handler has encoded already; codec passes its
// bytes through to the transport, which frees them once written.
type encoded struct{ data mem.BufferSlice }

// sendBursts sends items in messages of per items, made by wrap and
// encoded by c, in bursts of at least burstContainers items (or one
// message, if larger).
func sendBursts[T any](stream grpc.ServerStream, c codec, items []T, per int, wrap func([]T) any) error {
	var burst []*encoded
	queued := 0
	flush := func() error {
		for i, e := range burst {
			if err := stream.SendMsg(e); err != nil {
				return err
			}
			burst[i] = nil
		}
		burst, queued = burst[:0], 0
		return nil
	}
	err := sendChunks(items, per, func(chunk []T) error {
		data, err := c.Marshal(wrap(chunk))
		if err != nil {
			return err
		}
		burst = append(burst, &encoded{data})
		if queued += len(chunk); queued >= burstContainers {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
