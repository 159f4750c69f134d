package hostile

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// nonReadingPipeline: a peer with the largest windows and a small receive
// buffer pipelines requests for a method that does not exist, each a single
// HEADERS frame with END_STREAM, and never reads. Every stream ends at once,
// so the stream limit bounds nothing: only the server's own output bound
// does. The clgrpc server must stop reading such a peer (its writes then
// stall) or send it GOAWAY. grpc-go has no such bound and buffers the
// answers; its figures are logged.
func nonReadingPipeline(t *testing.T, s *target) {
	p, err := s.dial(true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	p.TCP.SetReadBuffer(4096)
	if err := p.OpenWindows(); err != nil {
		t.Fatal(err)
	}
	before := s.rssMiB(t)
	var sent int
	var stalled bool
	// Each request carries 200 octets of metadata, so that the kernel's
	// socket buffers (several MiB on loopback) fill after tens of thousands
	// of requests rather than millions.
	block := append(p.RequestBlock(s.addr, "/routeguide.RouteGuide/NoSuchMethod"), literalField("x-pad", strings.Repeat("p", 200))...)
	during(t, s, clgrpcBound(s, 512), func() {
		deadline := time.Now().Add(20 * time.Second)
		for sent = 0; sent < 1000000 && time.Now().Before(deadline); sent++ {
			// A write that makes no progress for 2 s has stalled.
			p.Conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
			id := uint32(2*sent + 1)
			if err := p.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: id,
				BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
				stalled = true
				return
			}
		}
	})
	after := s.rssMiB(t)
	o := p.Collect(time.Second)
	t.Logf("%d requests pipelined, never read: writes stalled=%v, RSS %.0f -> %.0f MiB; then: %v",
		sent, stalled, before, after, o)
	if s.name == "lisp" && !stalled && o.GoAway == nil {
		t.Errorf("the server took %d requests from a peer that reads nothing, and neither stalled it nor sent GOAWAY", sent)
	}
}

// literalField is the HPACK encoding of name: value as a literal that is
// never indexed, so it can follow any block without changing the table.
func literalField(name, value string) []byte {
	var b bytes.Buffer
	hpack.NewEncoder(&b).WriteField(hpack.HeaderField{Name: name, Value: value, Sensitive: true})
	return b.Bytes()
}

// idleRouteChats: five connections open 1,000 RouteChat streams each and
// send nothing on them. A well-behaved client on another connection must
// still get its unary and streaming calls answered within two seconds.
func idleRouteChats(t *testing.T, s *target) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var conns []*grpc.ClientConn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 5; i++ {
		c, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(s.creds()))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		client := pb.NewRouteGuideClient(c)
		var wg sync.WaitGroup
		for j := 0; j < 1000; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := client.RouteChat(ctx); err != nil {
					t.Errorf("opening an idle RouteChat: %v", err)
				}
			}()
		}
		wg.Wait()
	}
	time.Sleep(time.Second) // every stream's HEADERS has reached the server
	t.Logf("%s server with 5,000 idle RouteChat streams: %d threads, %.0f MiB RSS", s.name, s.threads(t), s.rssMiB(t))
	s.healthy(t, "with 5,000 idle RouteChat streams", 768)
	if err := routeChatOnce(s.addr, s.creds(), 2*time.Second); err != nil {
		t.Errorf("with 5,000 idle RouteChat streams, a well-behaved RouteChat was not served: %v", err)
	}
}

// routeChatOnce sends one note on a new connection's RouteChat, half-closes
// and reads to the end, all within d.
func routeChatOnce(addr string, creds credentials.TransportCredentials, d time.Duration) error {
	ctx, conn, done, err := dialWithin(addr, creds, d)
	if err != nil {
		return err
	}
	defer done()
	stream, err := pb.NewRouteGuideClient(conn).RouteChat(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&pb.RouteNote{Location: &pb.Point{Latitude: 1, Longitude: 2}, Message: "hello"}); err != nil {
		return err
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}
