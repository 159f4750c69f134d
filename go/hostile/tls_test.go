package hostile

import (
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/internal/tlstest"
)

var (
	tlsCredentials = flag.String("tls_credentials", "", "rlocation of ca.pem of //tools/testcerts:credentials: TestHostilePeersOverTLS needs it")
	libssl         = flag.String("libssl", "", "rlocation of the pinned libssl.so.3 that the Lisp server loads")
)

// tlsCases attack the TLS handshake itself.
var tlsCases = []attackCase{
	{"stalled_handshakes", 512, stalledHandshakes, false},
	{"garbage_instead_of_client_hello", 512, garbageClientHello, false},
	{"one_octet_tls_records", 512, oneOctetRecords, false},
}

// TestHostilePeersOverTLS: every attack of TestHostilePeers against both
// servers over TLS, each connection through a full TLS handshake first,
// then the attacks on the handshake.
func TestHostilePeersOverTLS(t *testing.T) {
	setup, err := tlstest.New(*tlsCredentials, *libssl)
	if err != nil {
		t.Fatal(err)
	}
	raiseFileLimit(t)
	for _, srv := range []struct{ name, path string }{{"lisp", *lispServer}, {"go", *goServer}} {
		t.Run(srv.name, func(t *testing.T) {
			s := startServerOver(t, srv.name, srv.path, setup)
			s.healthy(t, "before any attack", 512)
			for _, c := range append(append([]attackCase{}, tlsCases...), cases...) {
				t.Run(c.name, func(t *testing.T) {
					c.run(t, s)
					s.healthy(t, "after the attack", c.bound(s))
				})
			}
			t.Logf("%s server over TLS after every attack: %.0f MiB RSS, %d threads", s.name, s.rssMiB(t), s.threads(t))
		})
	}
}

// stalledHandshakes: 1,000 connections that start a TLS handshake and
// stall, half before the ClientHello and half in the middle of its record.
// They cost the server no thread, a client is served meanwhile, and the
// server closes each at its handshake timeout (2 s).
func stalledHandshakes(t *testing.T, s *target) {
	const n = 1000
	threads := s.threads(t)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 1 {
			// A handshake record header and one octet of its 512.
			if _, err := c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.healthy(t, "with 1,000 stalled TLS handshakes", 512)
	t.Logf("%s server with %d stalled TLS handshakes: %d threads (%d before)", s.name, n, s.threads(t), threads)
	if s.name == "lisp" && s.threads(t) > threads+8 {
		t.Errorf("stalled handshakes cost threads: %d, %d before", s.threads(t), threads)
	}
	if open := stillOpen(conns, 6*time.Second); open > 0 {
		t.Errorf("%d of %d stalled handshakes were still open 6 s after they began (handshake timeout 2 s)", open, n)
	}
}

// garbageClientHello: 100 connections that send what is not TLS (a
// plaintext HTTP/2 preface, an HTTP/1.1 request, random octets) are closed
// at once.
func garbageClientHello(t *testing.T, s *target) {
	payloads := [][]byte{
		[]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
		[]byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
		{0x16, 0x03, 0x01, 0x00, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff}, // a handshake record that is no ClientHello
		{0x17, 0x03, 0x03, 0x00, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 100; i++ {
		c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.Write(payloads[i%len(payloads)])
	}
	if open := stillOpen(conns, 3*time.Second); open > 0 {
		t.Errorf("%d of 100 connections that sent no TLS were still open 3 s later", open)
	}
}

// stillOpen reads each connection to its end, all within d from now, and
// counts those the server had not closed by then.
func stillOpen(conns []net.Conn, d time.Duration) int {
	deadline := time.Now().Add(d)
	open := 0
	for _, c := range conns {
		c.SetReadDeadline(deadline)
		if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
			open++
		}
	}
	return open
}
