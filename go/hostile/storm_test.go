package hostile

import (
	"io"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// settingsWindowStorm: a connection opens 900 GetFeature streams whose
// requests never end, then sends up to 20,000 SETTINGS frames that move the
// initial window size and as many WINDOW_UPDATEs spread over its streams,
// reading every answer. A server whose work for each SETTINGS grows with
// its streams spends seconds on them; a well-behaved client on another
// connection must be answered meanwhile.
func settingsWindowStorm(t *testing.T, s *target) {
	const streams = 900
	p, err := s.dial(true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Conn.Close()
	go io.Copy(io.Discard, p.Conn) // SETTINGS ACKs must not pile up unread
	p.Conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	for i := 0; i < streams; i++ {
		if err := p.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(1 + 2*i),
			BlockFragment: p.RequestBlock(s.addr, getFeaturePath), EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	var sent int
	during(t, s, 512, func() {
		deadline := time.Now().Add(5 * time.Second)
		for sent = 0; sent < 20000 && time.Now().Before(deadline); sent++ {
			window := uint32(65535 + (sent%2)*(1<<20))
			if p.Framer.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: window}) != nil {
				return
			}
			if p.Framer.WriteWindowUpdate(uint32(1+2*(sent%streams)), 1) != nil {
				return
			}
		}
	})
	t.Logf("%d SETTINGS and %d WINDOW_UPDATE frames on a connection with %d open streams", sent, sent, streams)
}
