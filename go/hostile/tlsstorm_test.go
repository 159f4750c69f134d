package hostile

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/protobuf/proto"

	"github.com/grpcbench/grpcbench/internal/tlstest"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// oneOctetRecords: 20 connections send a GetFeature request and then
// WINDOW_UPDATE frames for two seconds, every octet in a TLS record of its
// own (22 octets of overhead each). Each record costs the server a decryption and
// a pass through its frame reader; it must answer the requests and stay
// within its memory bound meanwhile.
func oneOctetRecords(t *testing.T, s *target) {
	if s.tls == nil {
		t.Skip("a case for TLS")
	}
	const conns = 20
	var answered atomic.Int32
	var wg sync.WaitGroup
	during(t, s, 512, func() {
		for i := 0; i < conns; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if oneOctetExchange(s) {
					answered.Add(1)
				}
			}()
		}
		wg.Wait()
	})
	t.Logf("%d of %d connections writing one-octet TLS records had GetFeature answered", answered.Load(), conns)
	if answered.Load() != conns {
		t.Errorf("only %d of %d connections writing one-octet records were answered", answered.Load(), conns)
	}
}

// oneOctetExchange sends a GetFeature request and two seconds of
// WINDOW_UPDATEs one octet per TLS record, then reads until the request's
// trailers.
func oneOctetExchange(s *target) bool {
	p, err := s.dial(false)
	if err != nil {
		return false
	}
	defer p.Conn.Close()
	var out bytes.Buffer
	f := http2.NewFramer(&out, nil)
	out.WriteString(http2.ClientPreface)
	f.WriteSettings()
	f.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: p.RequestBlock(s.addr, getFeaturePath), EndHeaders: true})
	point, _ := proto.Marshal(&pb.Point{Latitude: 409146138, Longitude: -746188906})
	f.WriteData(1, true, GRPCMessage(point, uint32(len(point))))
	p.Conn.SetDeadline(time.Now().Add(10 * time.Second))
	end := time.Now().Add(2 * time.Second)
	for time.Now().Before(end) {
		for _, b := range out.Bytes() {
			if _, err := p.Conn.Write([]byte{b}); err != nil {
				return false
			}
		}
		out.Reset()
		f.WriteWindowUpdate(0, 1)
	}
	for {
		fr, err := p.Framer.ReadFrame()
		if err != nil {
			return false
		}
		if h, ok := fr.(*http2.HeadersFrame); ok && h.StreamID == 1 && h.StreamEnded() {
			return true
		}
	}
}

// TestHandshakeStorm: both servers with an RSA-4096 key (each handshake a
// 4096-bit signature, several milliseconds of CPU) take full handshakes
// from 16 clients for five seconds, while another client's GetFeature
// calls on a connection of its own are timed: each must be answered
// within a second.
func TestHandshakeStorm(t *testing.T) {
	setup, err := tlstest.New(*tlsCredentials, *libssl)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, client := rsa4096Credentials(t)
	for _, srv := range []struct{ name, path string }{{"lisp", *lispServer}, {"go", *goServer}} {
		t.Run(srv.name, func(t *testing.T) {
			s := startServerWithKey(t, srv.name, srv.path, setup, certFile, keyFile, client)
			s.healthy(t, "before the storm", 512)
			handshakeStorm(t, s)
			s.healthy(t, "after the storm", 512)
		})
	}
}

func handshakeStorm(t *testing.T, s *target) {
	ctx, conn, done, err := dialWithin(s.addr, s.creds(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	c := pb.NewRouteGuideClient(conn)
	if _, err := c.GetFeature(ctx, &pb.Point{}); err != nil {
		t.Fatal(err)
	}
	var handshakes atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			config := s.tls.Clone()
			config.NextProtos = []string{"h2"}
			for {
				select {
				case <-stop:
					return
				default:
				}
				d := net.Dialer{Timeout: 5 * time.Second}
				tc, err := tls.DialWithDialer(&d, "tcp", s.addr, config)
				if err == nil {
					handshakes.Add(1)
					tc.Close()
				}
			}
		}()
	}
	var latencies []time.Duration
	var failed int
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		start := time.Now()
		if _, err := c.GetFeature(ctx, &pb.Point{Latitude: 409146138, Longitude: -746188906}); err != nil {
			failed++
		}
		latencies = append(latencies, time.Since(start))
	}
	close(stop)
	wg.Wait()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	n := len(latencies)
	t.Logf("%s server: %d RSA-4096 handshakes in 5 s; %d GetFeature calls meanwhile: p50 %v, p99 %v, max %v, %d failed",
		s.name, handshakes.Load(), n, latencies[n/2], latencies[n*99/100], latencies[n-1], failed)
	if failed > 0 || latencies[n-1] > time.Second {
		t.Errorf("during the storm %d calls failed and the slowest took %v; want none and under 1 s", failed, latencies[n-1])
	}
}

// rsa4096Credentials writes a self-signed RSA-4096 certificate for
// 127.0.0.1 and its key, and returns their files and a client
// configuration that trusts it.
func rsa4096Credentials(t *testing.T) (certFile, keyFile string, client *tls.Config) {
	key, err := rsa.GenerateKey(rand.Reader, 4096)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "rsa4096.pem"), filepath.Join(dir, "rsa4096.key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", mustPKCS8(t, key))
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
}

func mustPKCS8(t *testing.T, key *rsa.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
