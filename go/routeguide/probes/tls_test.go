package probes

import (
	"context"
	"flag"
	"net"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
	"github.com/grpcbench/grpcbench/internal/tlstest"
)

var (
	tlsCredentials = flag.String("tls_credentials", "", "rlocation of ca.pem of //tools/testcerts:credentials")
	libssl         = flag.String("libssl", "", "rlocation of the pinned libssl.so.3 that the Lisp programs load")
	goClient       = flag.String("go_client", "", "rlocation of the Go RouteGuide client")
	lispClient     = flag.String("lisp_client", "", "rlocation of the Lisp RouteGuide client")
)

func setup(t *testing.T) *tlstest.Setup {
	t.Helper()
	s, err := tlstest.New(*tlsCredentials, *libssl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startTLS runs a RouteGuide server over TLS with extra flags; the Lisp one
// must have loaded the pinned libssl.
func startTLS(t *testing.T, s *tlstest.Setup, name, path string, extra ...string) *serverproc.Process {
	t.Helper()
	argv := append([]string{runfile.Path(path), "-addr", "127.0.0.1:0",
		"-tls", "-cert_file", s.File("server.pem"), "-key_file", s.File("server.key")}, extra...)
	p := serverproc.StartForTestIn(t, name, s.LispEnv(), argv, 60*time.Second, 10*time.Second)
	if name == "lisp" {
		if err := s.CheckLibssl(p.PID()); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// grpcurl -cacert against each server over TLS: it verifies the server's
// certificate (which names 127.0.0.1) against the test CA, lists the
// services through reflection and calls GetFeature.
func TestGrpcurlOverTLS(t *testing.T) {
	s := setup(t)
	for name, path := range servers(t) {
		t.Run(name, func(t *testing.T) {
			addr := startTLS(t, s, name, path).Addr()
			tls := []string{"-cacert", s.File("ca.pem")}
			got := strings.Fields(runGrpcurlOver(t, tls, addr, "list"))
			sort.Strings(got)
			if !contains(got, "routeguide.RouteGuide") || !contains(got, "grpc.health.v1.Health") {
				t.Errorf("grpcurl -cacert ... list = %q, want RouteGuide and Health among them", got)
			}
			feature := runGrpcurlOver(t, tls, addr, "-d", `{"latitude": 409146138, "longitude": -746188906}`,
				"routeguide.RouteGuide/GetFeature")
			if !strings.Contains(feature, "Berkshire Valley Management Area Trail") {
				t.Errorf("GetFeature through grpcurl over TLS = %s, want the Berkshire Valley feature", feature)
			}
		})
	}
}

// Each RouteGuide client against each server over mutual TLS: answered with
// the client certificate, refused without it.
func TestClientsOverMutualTLS(t *testing.T) {
	s := setup(t)
	if *goClient == "" || *lispClient == "" {
		t.Fatal("-go_client and -lisp_client are required")
	}
	clients := map[string]string{"go": *goClient, "lisp": *lispClient}
	for server, path := range servers(t) {
		addr := startTLS(t, s, server, path, "-ca_file", s.File("ca.pem"), "-require_client_cert").Addr()
		for client, clientPath := range clients {
			t.Run(client+" client, "+server+" server", func(t *testing.T) {
				base := []string{"-addr", addr, "-tls", "-ca_file", s.File("ca.pem"), "-server_host_override", tlstest.ServerName, "-rpc", "get"}
				out, err := runClient(t, s, clientPath, append(base, "-cert_file", s.File("client.pem"), "-key_file", s.File("client.key"))...)
				if err != nil || !strings.Contains(out, "Berkshire Valley Management Area Trail") {
					t.Errorf("with the client certificate: %v\n%s", err, out)
				}
				out, err = runClient(t, s, clientPath, base...)
				if err == nil {
					t.Errorf("without a client certificate the call succeeded, want refused:\n%s", out)
				}
			})
		}
	}
}

func runClient(t *testing.T, s *tlstest.Setup, path string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, runfile.Path(path), args...)
	cmd.Env = s.LispEnv()
	out, err := cmd.CombinedOutput()
	t.Logf("$ %s %s\n%s", path, strings.Join(args, " "), out)
	return string(out), err
}

// A graceful stop does not wait for a connection still in its TLS handshake
// (no frame can reach it): with a 10 s shutdown timeout and one silent TCP
// connection, the Lisp server exits at once.
func TestStopDoesNotWaitForHandshakes(t *testing.T) {
	s := setup(t)
	p := startTLS(t, s, "lisp", *lispServer, "-shutdown_timeout", "10s")
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(200 * time.Millisecond) // accepted
	start := time.Now()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the server took %v to stop with a connection in its TLS handshake, want well under its 10 s shutdown timeout", took)
	} else {
		t.Logf("stopped in %v", took)
	}
}
