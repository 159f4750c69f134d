package interop_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/grpcbench/grpcbench/internal/runfile"
)

// These tests need the TLS target's flags (interop_tls_test): the Lisp
// interop server, the test credentials, the pinned libssl and h2spec.

// startLispTLS starts the Lisp interop server over TLS with extra flags
// and returns its address.
func startLispTLS(t *testing.T, extra ...string) string {
	t.Helper()
	if *lispServer == "" || *tlsCredentials == "" {
		t.Fatal("-lisp_server, -tls_credentials and -libssl are required")
	}
	sec := transport(t)
	p := startServerIn(t, "lisp-tls", sec.env, 60*time.Second, *lispServer,
		append(append([]string{"-port", "0"}, sec.serverArgs...), extra...)...)
	sec.checkLibssl(t, p)
	return p.Addr()
}

// emptyCall makes one EmptyCall with grpc-go over TLS config.
func emptyCall(t *testing.T, addr string, config *tls.Config) error {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(config)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = testgrpc.NewTestServiceClient(conn).EmptyCall(ctx, &testgrpc.Empty{})
	return err
}

// clientConfig trusts the test CA and presents the key pair base, if any.
func clientConfig(t *testing.T, base string) *tls.Config {
	t.Helper()
	config, err := transport(t).setup.ClientConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	return config
}

// credential is the path of one file of the test credentials.
func credential(t *testing.T, name string) string {
	t.Helper()
	return transport(t).setup.File(name)
}

// TestMutualTLS: with -require_client_cert the server answers a client
// whose certificate the CA file verifies, refuses one with no certificate
// or one from another CA during the handshake, and stays healthy.
func TestMutualTLS(t *testing.T) {
	addr := startLispTLS(t, "-ca_file", credential(t, "ca.pem"), "-require_client_cert")
	if err := emptyCall(t, addr, clientConfig(t, "client")); err != nil {
		t.Fatalf("a client with a certificate of the CA: %v", err)
	}
	for name, config := range map[string]*tls.Config{
		"no certificate":           clientConfig(t, ""),
		"another CA's certificate": clientConfig(t, "other_client"),
	} {
		err := emptyCall(t, addr, config)
		if err == nil {
			t.Errorf("a client with %s was answered, want refused", name)
			continue
		}
		t.Logf("a client with %s: %v", name, err)
	}
	if err := emptyCall(t, addr, clientConfig(t, "client")); err != nil {
		t.Fatalf("after the refusals, a client with a certificate of the CA: %v", err)
	}
	// A client that caches sessions resumes one, over TLS 1.3 and 1.2.
	for _, v := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		config := clientConfig(t, "client")
		config.ClientSessionCache = tls.NewLRUClientSessionCache(4)
		config.MinVersion, config.MaxVersion = v, v
		if _, err := h2Connection(addr, config); err != nil {
			t.Fatalf("%s, first connection: %v", tls.VersionName(v), err)
		}
		state, err := h2Connection(addr, config)
		if err != nil {
			t.Fatalf("%s, resuming: %v", tls.VersionName(v), err)
		}
		if !state.DidResume {
			t.Errorf("%s: the second connection did not resume the session", tls.VersionName(v))
		}
	}
}

// h2Connection opens a TLS connection with ALPN h2, sends the HTTP/2
// preface and empty SETTINGS, reads the server's first frame (by which
// time a TLS 1.3 session ticket has arrived), and closes it.
func h2Connection(addr string, config *tls.Config) (tls.ConnectionState, error) {
	config = config.Clone()
	config.NextProtos = []string{"h2"}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, config)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return tls.ConnectionState{}, err
	}
	if _, err := conn.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")); err != nil {
		return tls.ConnectionState{}, err
	}
	if _, err := io.ReadFull(conn, make([]byte, 9)); err != nil {
		return tls.ConnectionState{}, err
	}
	return conn.ConnectionState(), nil
}

// handshake dials addr over TLS with config and returns the connection
// state, or the handshake's error.
func handshake(addr string, config *tls.Config) (tls.ConnectionState, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, config)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	return conn.ConnectionState(), nil
}

// TestALPNAndVersions: the server selects h2, refuses a client that offers
// only other protocols, closes a connection whose client offered no ALPN,
// and speaks TLS 1.2 and 1.3 and nothing older.
func TestALPNAndVersions(t *testing.T) {
	addr := startLispTLS(t)
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		config := clientConfig(t, "")
		config.NextProtos = []string{"h2"}
		config.MinVersion, config.MaxVersion = v, v
		state, err := handshake(addr, config)
		if err != nil {
			t.Errorf("%s with ALPN h2: %v", tls.VersionName(v), err)
		} else if state.NegotiatedProtocol != "h2" {
			t.Errorf("%s: negotiated %q, want h2", tls.VersionName(v), state.NegotiatedProtocol)
		}
	}
	old := clientConfig(t, "")
	old.NextProtos = []string{"h2"}
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	if _, err := handshake(addr, old); err == nil {
		t.Error("a TLS 1.1 handshake succeeded, want refused")
	}
	// TLS 1.2 suites that HTTP/2 forbids (RFC 9113 9.2.2): CBC.
	cbc := clientConfig(t, "")
	cbc.NextProtos = []string{"h2"}
	cbc.MinVersion, cbc.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	cbc.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA}
	if state, err := handshake(addr, cbc); err == nil {
		t.Errorf("TLS 1.2 with only CBC suites negotiated %s, want refused", tls.CipherSuiteName(state.CipherSuite))
	}
	other := clientConfig(t, "")
	other.NextProtos = []string{"http/1.1"}
	if _, err := handshake(addr, other); err == nil || !strings.Contains(err.Error(), "no application protocol") {
		t.Errorf("a client offering only http/1.1: %v, want the no_application_protocol alert", err)
	}
	// No ALPN at all: the handshake may complete (TLS 1.3 clients finish
	// first), but the server closes the connection without a word.
	conn, err := tls.Dial("tcp", addr, clientConfig(t, ""))
	if err == nil {
		defer conn.Close()
		if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		n, err := conn.Read(make([]byte, 64))
		if n > 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("a client without ALPN read %d octets, %v; want the connection closed", n, err)
		}
	}
	if err := emptyCall(t, addr, clientConfig(t, "")); err != nil {
		t.Fatalf("after the refusals: %v", err)
	}
}

// TestStalledAndGarbageHandshakes: connections that stall mid-handshake or
// send something that is not TLS cost the server no thread: a client is
// answered while they are open, and the garbage is refused.
func TestStalledAndGarbageHandshakes(t *testing.T) {
	addr := startLispTLS(t)
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for i := 0; i < 200; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		if i%2 == 1 {
			// The first octets of a ClientHello record, then nothing.
			if _, err := c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}); err != nil {
				t.Fatal(err)
			}
		}
	}
	garbage, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer garbage.Close()
	if _, err := garbage.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := garbage.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(garbage); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Error("a plaintext HTTP/2 preface was not refused within 10 s")
	}
	if err := emptyCall(t, addr, clientConfig(t, "")); err != nil {
		t.Fatalf("with 200 stalled handshakes open: %v", err)
	}
}

// TestH2specOverTLS: h2spec -t, every case, against the Lisp server.
func TestH2specOverTLS(t *testing.T) {
	if *h2spec == "" {
		t.Fatal("-h2spec is required")
	}
	addr := startLispTLS(t)
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, _ := exec.CommandContext(ctx, runfile.Path(*h2spec), "-h", host, "-p", port, "-t", "-k", "-o", "2").CombinedOutput()
	summary := h2specSummaryRe.FindString(string(out))
	if summary == "" {
		t.Fatalf("h2spec printed no summary:\n%s", out)
	}
	t.Logf("h2spec -t against the Lisp server: %s", summary)
	if !strings.Contains(summary, " 0 failed") || !strings.Contains(summary, " 0 skipped") {
		t.Errorf("h2spec -t: %s, want every case passed\n%s", summary, out)
	}
}
