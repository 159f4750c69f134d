package mockcri

import (
	"context"
	"errors"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// recordingStream is a grpc.ServerStream that keeps what is sent, to see
// the order and grouping of sendBursts without a transport.
type recordingStream struct {
	grpc.ServerStream
	sent    []int // the value of each message, decoded
	failAt  int   // SendMsg fails at this message (1-based); 0 never
	encoded int   // messages encoded when the first was sent
	marshal *int
}

func (s *recordingStream) SendMsg(m any) error {
	if len(s.sent) == 0 {
		s.encoded = *s.marshal
	}
	if s.failAt > 0 && len(s.sent)+1 == s.failAt {
		return errors.New("send failed")
	}
	e := m.(*encoded)
	v := &wrapperspb.Int64Value{}
	if err := (codec{pool: mem.DefaultBufferPool()}).Unmarshal(e.data, v); err != nil {
		return err
	}
	e.data.Free()
	s.sent = append(s.sent, int(v.Value))
	return nil
}

func (s *recordingStream) Context() context.Context { return context.Background() }

// sendBursts sends every chunk once, in order, and encodes a burst of
// burstContainers items before sending the first.
func TestSendBursts(t *testing.T) {
	items := make([]int, 3*burstContainers+1)
	for i := range items {
		items[i] = i
	}
	encodes := 0
	s := &recordingStream{marshal: &encodes}
	err := sendBursts(s, codec{pool: mem.DefaultBufferPool()}, items, 1, func(chunk []int) any {
		encodes++
		return wrapperspb.Int64(int64(chunk[0]))
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.sent, items) {
		t.Errorf("sent %v, want %v", s.sent, items)
	}
	if s.encoded != burstContainers {
		t.Errorf("%d messages encoded before the first send, want %d", s.encoded, burstContainers)
	}
}

func TestSendBurstsStopsAtError(t *testing.T) {
	encodes := 0
	s := &recordingStream{marshal: &encodes, failAt: 2}
	err := sendBursts(s, codec{pool: mem.DefaultBufferPool()}, make([]int, 4*burstContainers), 1, func([]int) any {
		encodes++
		return wrapperspb.Int64(1)
	})
	if err == nil || len(s.sent) != 1 || encodes != burstContainers {
		t.Errorf("err %v after %d sent and %d encoded; want an error after 1 sent, one burst encoded", err, len(s.sent), encodes)
	}
}
