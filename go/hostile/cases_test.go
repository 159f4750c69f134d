package hostile

import (
	"math"
	"math/rand"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

const getFeaturePath = "/routeguide.RouteGuide/GetFeature"

// attackCase is one attack. run attacks s, checking s.healthy while the
// attack is under way; the test checks it again afterwards.
type attackCase struct {
	name     string
	boundMiB float64 // RSS bound during and after the attack
	run      func(t *testing.T, s *target)
	// grpc-go bounds nothing against this attack: its RSS is logged, not
	// judged (such a case runs last, as it leaves that server large).
	goUnbounded bool
}

// bound is the case's RSS bound for s.
func (c attackCase) bound(s *target) float64 {
	if c.goUnbounded && s.name == "go" {
		return math.Inf(1)
	}
	return c.boundMiB
}

var cases = []attackCase{
	{"continuation_flood", 512, continuationFlood, false},
	{"ping_flood_no_read", 512, func(t *testing.T, s *target) {
		floodNoRead(t, s, func(p *Peer, i int) error { return p.Framer.WritePing(false, [8]byte{byte(i)}) })
	}, false},
	{"settings_flood_no_read", 512, func(t *testing.T, s *target) {
		floodNoRead(t, s, func(p *Peer, i int) error { return p.Framer.WriteSettings() })
	}, false},
	{"rapid_reset", 512, rapidReset, false},
	{"slowloris", 512, slowloris, false},
	{"idle_10000", 768, idleConnections, false},
	{"zero_window", 512, zeroWindow, false},
	{"declared_4gib_message", 512, hugeDeclaredMessage, false},
	{"nested_100000_deep", 512, deepNesting, false},
	{"garbage_after_preface", 512, garbageAfterPreface, false},
	{"http1_request", 512, http1Request, false},
	{"settings_window_storm_900_streams", 512, settingsWindowStorm, false},
	{"idle_route_chats_5x1000", 768, idleRouteChats, false},
	{"non_reading_pipeline", 512, nonReadingPipeline, true},
}

// during runs attack in the background and checks the server while it
// runs; it returns once both are done.
func during(t *testing.T, s *target, bound float64, attack func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); attack() }()
	time.Sleep(300 * time.Millisecond)
	s.healthy(t, "during the attack", bound)
	wg.Wait()
}

// continuationFlood: a header block that never ends, 16 KiB at a time, up
// to 64 MiB or until the server hangs up.
func continuationFlood(t *testing.T, s *target) {
	p, err := s.dial(true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	chunk := make([]byte, 16384)
	for i := range chunk {
		chunk[i] = 0x40 // literal with incremental indexing, new name: never ends
	}
	var sent int
	during(t, s, 512, func() {
		p.Conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if p.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: p.RequestBlock(s.addr, getFeaturePath)}) != nil {
			return
		}
		for sent = 0; sent < 4096; sent++ {
			if p.Framer.WriteContinuation(1, false, chunk) != nil {
				return
			}
		}
	})
	o := p.Collect(3 * time.Second)
	t.Logf("after %d CONTINUATION frames: %v", sent, o)
	if o.GoAway == nil && !o.Closed {
		t.Errorf("the connection neither got GOAWAY nor was closed: %v", o)
	}
}

// floodNoRead writes frames that each ask for a reply, up to 200,000 or 5
// seconds, and never reads: replies pile up unless the server bounds them.
func floodNoRead(t *testing.T, s *target, write func(p *Peer, i int) error) {
	p, err := s.dial(true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	var sent int
	during(t, s, 512, func() {
		deadline := time.Now().Add(5 * time.Second)
		p.Conn.SetWriteDeadline(deadline)
		for sent = 0; sent < 200000 && time.Now().Before(deadline); sent++ {
			if write(p, sent) != nil {
				return
			}
		}
	})
	o := p.Collect(2 * time.Second)
	t.Logf("sent %d frames without reading; then: %v", sent, o)
}

// rapidReset opens 20,000 streams, each with a complete request, and
// cancels each at once (CVE-2023-44487), reading whatever comes back.
func rapidReset(t *testing.T, s *target) {
	p, err := s.dial(true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	var o Outcome
	done := make(chan struct{})
	go func() { o = p.Collect(30 * time.Second); close(done) }()
	var sent int
	during(t, s, 512, func() {
		p.Conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		msg := GRPCMessage([]byte{0x08, 0x01, 0x10, 0x01}, 4)
		for sent = 0; sent < 20000; sent++ {
			id := uint32(2*sent + 1)
			if p.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: p.RequestBlock(s.addr, getFeaturePath), EndHeaders: true}) != nil ||
				p.Framer.WriteData(id, true, msg) != nil ||
				p.Framer.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
				return
			}
		}
	})
	p.Conn.Close()
	<-done
	t.Logf("%d streams opened and reset; the server answered: %v", sent, o)
}

// slowloris: 1,000 connections that send half the preface and stop. The
// servers run with -connection_timeout 2s: each must be closed by then.
func slowloris(t *testing.T, s *target) {
	var peers []*Peer
	defer func() {
		for _, p := range peers {
			p.Conn.Close()
		}
	}()
	for i := 0; i < 1000; i++ {
		p, err := s.dial(false)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		p.Conn.Write([]byte(http2.ClientPreface[:10]))
		peers = append(peers, p)
	}
	s.healthy(t, "during the attack", 512)
	closed := 0
	deadline := time.Now().Add(6 * time.Second)
	for _, p := range peers {
		p.Conn.SetReadDeadline(deadline)
		buf := make([]byte, 4096)
		for {
			if _, err := p.Conn.Read(buf); err != nil {
				if ne, ok := err.(interface{ Timeout() bool }); !ok || !ne.Timeout() {
					closed++
				}
				break
			}
		}
	}
	if closed != len(peers) {
		t.Errorf("%d of %d connections that never finished the preface were still open 6 s later (handshake timeout 2 s)", len(peers)-closed, len(peers))
	}
}

// idleConnections: 10,000 connections that finish the handshake and then
// say nothing.
func idleConnections(t *testing.T, s *target) {
	var peers []*Peer
	defer func() {
		for _, p := range peers {
			p.Conn.Close()
		}
	}()
	before := s.rssMiB(t)
	for i := 0; i < 10000; i++ {
		p, err := s.dial(true)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		peers = append(peers, p)
	}
	time.Sleep(2 * time.Second)
	after := s.rssMiB(t)
	t.Logf("%s server with 10,000 idle connections: %d threads, RSS %.0f MiB (%.1f KiB per connection)",
		s.name, s.threads(t), after, (after-before)*1024/10000)
	s.healthy(t, "with 10,000 idle connections", 768)
}

// zeroWindow: a client that advertises a zero stream window and sends 100
// requests; no response can be sent, and nothing else may suffer.
func zeroWindow(t *testing.T, s *target) {
	p, err := s.dial(false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	if err := p.Handshake([]http2.Setting{{ID: http2.SettingInitialWindowSize, Val: 0}}); err != nil {
		t.Fatal(err)
	}
	msg := GRPCMessage([]byte{0x08, 0x01, 0x10, 0x01}, 4)
	for i := 0; i < 100; i++ {
		id := uint32(2*i + 1)
		p.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: p.RequestBlock(s.addr, getFeaturePath), EndHeaders: true})
		p.Framer.WriteData(id, true, msg)
	}
	time.Sleep(500 * time.Millisecond)
	s.healthy(t, "with 100 responses waiting for window", 512)
}

// hugeDeclaredMessage: a message whose prefix declares 4 GiB - 1.
func hugeDeclaredMessage(t *testing.T, s *target) {
	p, err := s.dial(true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	p.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: p.RequestBlock(s.addr, getFeaturePath), EndHeaders: true})
	p.Framer.WriteData(1, false, GRPCMessage(make([]byte, 1000), 0xFFFFFFFF))
	o := p.Collect(3 * time.Second)
	t.Logf("answer: %v", o)
	if o.Status() != "8" && o.Resets == 0 && o.GoAway == nil {
		t.Errorf("want RESOURCE_EXHAUSTED (8), a reset or GOAWAY; got %v", o)
	}
}

// deepNesting: a Point carrying an unknown group nested 100,000 deep.
func deepNesting(t *testing.T, s *target) {
	p, err := s.dial(true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	const depth = 100000
	msg := make([]byte, 0, 2*depth)
	for i := 0; i < depth; i++ {
		msg = append(msg, 3<<3|3) // field 3, start group
	}
	for i := 0; i < depth; i++ {
		msg = append(msg, 3<<3|4) // field 3, end group
	}
	p.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: p.RequestBlock(s.addr, getFeaturePath), EndHeaders: true})
	o := p.SendFlowControlled(1, GRPCMessage(msg, uint32(len(msg))), 5*time.Second)
	t.Logf("answer: %v", o)
	if st := o.Status(); st != "13" && st != "3" {
		t.Errorf("want INTERNAL (13) or INVALID_ARGUMENT (3); got %v", o)
	}
}

// garbageAfterPreface: the preface, then 64 KiB of random octets.
func garbageAfterPreface(t *testing.T, s *target) {
	p, err := s.dial(false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	junk := make([]byte, 65536)
	rand.New(rand.NewSource(1)).Read(junk)
	p.Conn.SetWriteDeadline(time.Now().Add(3 * time.Second))
	p.Conn.Write([]byte(http2.ClientPreface))
	p.Conn.Write(junk)
	o := p.Collect(3 * time.Second)
	t.Logf("answer: %v", o)
	if o.GoAway == nil && !o.Closed {
		t.Errorf("the connection neither got GOAWAY nor was closed: %v", o)
	}
}

// http1Request: an HTTP/1.1 request where HTTP/2 is expected.
func http1Request(t *testing.T, s *target) {
	p, err := s.dial(false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	p.Conn.Write([]byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
	p.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		if _, err := p.Conn.Read(buf); err != nil {
			if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
				t.Errorf("the connection was still open 5 s after an HTTP/1.1 request")
			}
			return
		}
	}
}
