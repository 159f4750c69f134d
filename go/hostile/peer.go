package hostile

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Peer is a raw HTTP/2 client connection: it writes whatever frames an
// attack needs, valid or not, and reads frames only when asked to.
type Peer struct {
	Conn   net.Conn     // the connection HTTP/2 frames go over: TCP, or TLS over it
	TCP    *net.TCPConn // the socket itself
	Framer *http2.Framer
	enc    *hpack.Encoder
	hbuf   bytes.Buffer
}

// Dial connects to addr (a loopback HOST:PORT) over plaintext and, if handshake is set,
// sends the client preface and an empty SETTINGS frame.
func Dial(addr string, handshake bool) (*Peer, error) {
	return DialOver(addr, nil, handshake)
}

// DialOver is Dial over TLS with config (offering ALPN h2) when config is
// not nil: the TLS handshake is done before it returns.
func DialOver(addr string, config *tls.Config, handshake bool) (*Peer, error) {
	tcp, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	var c net.Conn = tcp
	if config != nil {
		config = config.Clone()
		config.NextProtos = []string{"h2"}
		t := tls.Client(tcp, config)
		t.SetDeadline(time.Now().Add(5 * time.Second))
		if err := t.Handshake(); err != nil {
			tcp.Close()
			return nil, err
		}
		t.SetDeadline(time.Time{})
		c = t
	}
	p := &Peer{Conn: c, TCP: tcp.(*net.TCPConn), Framer: http2.NewFramer(c, c)}
	p.Framer.AllowIllegalWrites = true
	p.Framer.AllowIllegalReads = true
	p.Framer.SetMaxReadFrameSize(1 << 24)
	p.enc = hpack.NewEncoder(&p.hbuf)
	if handshake {
		if err := p.Handshake(nil); err != nil {
			c.Close()
			return nil, err
		}
	}
	return p, nil
}

// Handshake writes the client preface and a SETTINGS frame.
func (p *Peer) Handshake(settings []http2.Setting) error {
	if _, err := p.Conn.Write([]byte(http2.ClientPreface)); err != nil {
		return err
	}
	return p.Framer.WriteSettings(settings...)
}

// OpenWindows grants the server every window at once: the largest stream
// window in SETTINGS and the largest connection window, as a peer that
// means to read everything (or nothing) later does.
func (p *Peer) OpenWindows() error {
	if err := p.Framer.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1}); err != nil {
		return err
	}
	return p.Framer.WriteWindowUpdate(0, 1<<31-1-65535)
}

// RequestBlock is the HPACK block of a gRPC request for path.
func (p *Peer) RequestBlock(addr, path string) []byte {
	p.hbuf.Reset()
	for _, f := range []hpack.HeaderField{
		{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: path}, {Name: ":authority", Value: addr},
		{Name: "content-type", Value: "application/grpc"}, {Name: "te", Value: "trailers"},
	} {
		p.enc.WriteField(f)
	}
	return append([]byte(nil), p.hbuf.Bytes()...)
}

// GRPCMessage is msg behind the gRPC length prefix, with the length as
// given (a lie, when an attack wants one).
func GRPCMessage(msg []byte, length uint32) []byte {
	out := []byte{0, byte(length >> 24), byte(length >> 16), byte(length >> 8), byte(length)}
	return append(out, msg...)
}

// Outcome is how the server answered a peer: the frames it sent until the
// connection ended or the wait was over.
type Outcome struct {
	GoAway     *http2.GoAwayFrame
	Resets     int
	Trailers   []hpack.HeaderField
	Closed     bool // end of file or reset
	FrameCount int
	ResetCodes []http2.ErrCode
}

// Collect reads frames for up to d, decoding header blocks, and stops
// early at GOAWAY or close.
func (p *Peer) Collect(d time.Duration) Outcome {
	var o Outcome
	dec := hpack.NewDecoder(4096, nil)
	p.Conn.SetReadDeadline(time.Now().Add(d))
	defer p.Conn.SetReadDeadline(time.Time{})
	for {
		f, err := p.Framer.ReadFrame()
		if err != nil {
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				o.Closed = true
			}
			return o
		}
		o.FrameCount++
		switch f := f.(type) {
		case *http2.GoAwayFrame:
			o.GoAway = f
			return o
		case *http2.RSTStreamFrame:
			o.Resets++
			if len(o.ResetCodes) < 8 {
				o.ResetCodes = append(o.ResetCodes, f.ErrCode)
			}
		case *http2.HeadersFrame:
			if fields, err := dec.DecodeFull(f.HeaderBlockFragment()); err == nil && f.StreamEnded() {
				o.Trailers = fields
			}
		}
	}
}

// Status is the grpc-status of the last trailers seen, or "".
func (o Outcome) Status() string {
	for _, f := range o.Trailers {
		if f.Name == "grpc-status" {
			return f.Value
		}
	}
	return ""
}

func (o Outcome) String() string {
	s := fmt.Sprintf("%d frames, %d resets %v, closed=%v, status=%q", o.FrameCount, o.Resets, o.ResetCodes, o.Closed, o.Status())
	if o.GoAway != nil {
		s += fmt.Sprintf(", GOAWAY %v %q", o.GoAway.ErrCode, o.GoAway.DebugData())
	}
	return s
}

// SendFlowControlled writes body as DATA on stream id, ending the stream,
// within the windows the server grants (its SETTINGS and WINDOW_UPDATEs),
// and then collects the answer for up to wait. A well-behaved sender, so
// that what an attack tests is the message, not flow control.
func (p *Peer) SendFlowControlled(id uint32, body []byte, wait time.Duration) Outcome {
	type grant struct {
		stream uint32
		n      int64
	}
	grants := make(chan grant, 1024)
	result := make(chan Outcome, 1)
	go func() {
		var o Outcome
		dec := hpack.NewDecoder(4096, nil)
		p.Conn.SetReadDeadline(time.Now().Add(wait + 10*time.Second))
		defer close(grants)
		for {
			f, err := p.Framer.ReadFrame()
			if err != nil {
				o.Closed = true
				result <- o
				return
			}
			o.FrameCount++
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if v, ok := f.Value(http2.SettingInitialWindowSize); ok && !f.IsAck() {
					grants <- grant{id, int64(v) - 65535}
				}
			case *http2.WindowUpdateFrame:
				grants <- grant{f.StreamID, int64(f.Increment)}
			case *http2.GoAwayFrame:
				o.GoAway = f
				result <- o
				return
			case *http2.RSTStreamFrame:
				o.Resets++
				o.ResetCodes = append(o.ResetCodes, f.ErrCode)
				result <- o
				return
			case *http2.HeadersFrame:
				if fields, err := dec.DecodeFull(f.HeaderBlockFragment()); err == nil && f.StreamEnded() {
					o.Trailers = fields
					result <- o
					return
				}
			}
		}
	}()
	connWin, streamWin := int64(65535), int64(65535)
	timeout := time.After(wait)
	for len(body) > 0 {
		n := min(int64(len(body)), connWin, streamWin, 16384)
		if n <= 0 {
			select {
			case g, ok := <-grants:
				if !ok {
					return <-result
				}
				if g.stream == 0 {
					connWin += g.n
				} else {
					streamWin += g.n
				}
				continue
			case <-timeout:
				return <-result
			}
		}
		if p.Framer.WriteData(id, int(n) == len(body), body[:n]) != nil {
			break
		}
		body = body[n:]
		connWin -= n
		streamWin -= n
	}
	go func() {
		for range grants {
		}
	}()
	select {
	case o := <-result:
		return o
	case <-time.After(wait):
		p.Conn.Close()
		return <-result
	}
}
