package hostile

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
	"github.com/grpcbench/grpcbench/internal/tlstest"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

var (
	lispServer = flag.String("lisp_server", "", "path of the Lisp RouteGuide server")
	goServer   = flag.String("go_server", "", "path of the Go RouteGuide server")
)

// serverFlags are given to both servers alike: a short handshake timeout so
// that the slowloris case sees connections closed within the test, and room
// for the idle-connection case.
var serverFlags = []string{"-addr", "127.0.0.1:0", "-connection_timeout", "2s", "-max_connections", "15000", "-heap_report"}

// tlsMemoryAllowance scales every RSS bound for a server over TLS: a TLS
// connection costs both servers several times the memory of a plaintext one
// (measured with 10,000 idle ones: Lisp 21 KiB against 4, Go 45 against 22),
// and Go's heap keeps afterwards what those took.
const tlsMemoryAllowance = 1.5

// target is a server under attack.
type target struct {
	name string
	proc *serverproc.Process
	addr string
	tls  *tls.Config // a client's TLS configuration when the server speaks TLS
}

func startServer(t *testing.T, name, path string) *target {
	t.Helper()
	return startServerOver(t, name, path, nil)
}

// startServerOver starts a RouteGuide server over TLS with the test
// credentials of setup, or plaintext when setup is nil.
func startServerOver(t *testing.T, name, path string, setup *tlstest.Setup) *target {
	t.Helper()
	if setup == nil {
		return startServerWithKey(t, name, path, nil, "", "", nil)
	}
	config, err := setup.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	return startServerWithKey(t, name, path, setup, setup.File("server.pem"), setup.File("server.key"), config)
}

// startServerWithKey starts a RouteGuide server over TLS with the
// certificate and key files given, which client trusts, loading setup's
// libssl; plaintext when setup is nil.
func startServerWithKey(t *testing.T, name, path string, setup *tlstest.Setup, certFile, keyFile string, client *tls.Config) *target {
	t.Helper()
	if path == "" {
		t.Fatalf("-%s_server not given", name)
	}
	argv := append([]string{runfile.Path(path)}, serverFlags...)
	var env []string
	if setup != nil {
		argv = append(argv, "-tls", "-cert_file", certFile, "-key_file", keyFile)
		env = setup.LispEnv()
	}
	p := serverproc.StartForTestIn(t, name, env, argv, 60*time.Second, 5*time.Second)
	if setup != nil && name == "lisp" {
		if err := setup.CheckLibssl(p.PID()); err != nil {
			t.Fatal(err)
		}
	}
	return &target{name: name, proc: p, addr: p.Addr(), tls: client}
}

// dial connects a raw HTTP/2 peer to the server, over TLS if it speaks
// TLS.
func (s *target) dial(handshake bool) (*Peer, error) {
	return DialOver(s.addr, s.tls, handshake)
}

// creds are a well-behaved grpc-go client's transport credentials for the
// server.
func (s *target) creds() credentials.TransportCredentials {
	if s.tls == nil {
		return insecure.NewCredentials()
	}
	return credentials.NewTLS(s.tls.Clone())
}

// rssMiB is the server's resident set size.
func (s *target) rssMiB(t *testing.T) float64 {
	rss, err := s.proc.RSS()
	if err != nil {
		t.Fatalf("%s server: %v", s.name, err)
	}
	return float64(rss) / (1 << 20)
}

// threads is the server's thread count.
func (s *target) threads(t *testing.T) int {
	n, err := s.proc.Threads()
	if err != nil {
		t.Fatalf("%s server: %v", s.name, err)
	}
	return n
}

// healthy asserts the three things every case promises: the process is
// alive, a well-behaved client on a fresh connection gets a correct
// GetFeature within a second, and RSS and the heap are under boundMiB.
func (s *target) healthy(t *testing.T, phase string, boundMiB float64) {
	t.Helper()
	if err := s.proc.ExitedEarly(); err != nil {
		t.Fatalf("%s: %s server died: %v", phase, s.name, err)
	}
	if err := getFeature(s.addr, s.creds()); err != nil {
		t.Errorf("%s: a well-behaved client was not served: %v", phase, err)
	}
	if s.tls != nil {
		boundMiB *= tlsMemoryAllowance
	}
	s.checkMemory(t, phase, boundMiB)
}

// dialWithin is a new client connection to addr with creds and a context
// that ends d from now, for a well-behaved client's calls; done releases
// both.
func dialWithin(addr string, creds credentials.TransportCredentials, d time.Duration) (ctx context.Context, conn *grpc.ClientConn, done func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	conn, err = grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return ctx, conn, func() { conn.Close(); cancel() }, nil
}

// getFeature asks for a point of the standard database on a new connection
// and checks the answer, all within one second.
func getFeature(addr string, creds credentials.TransportCredentials) error {
	ctx, conn, done, err := dialWithin(addr, creds, time.Second)
	if err != nil {
		return err
	}
	defer done()
	f, err := pb.NewRouteGuideClient(conn).GetFeature(ctx, &pb.Point{Latitude: 409146138, Longitude: -746188906})
	if err != nil {
		return err
	}
	if f.GetName() != "Berkshire Valley Management Area Trail, Jefferson, NJ, USA" {
		return fmt.Errorf("wrong feature %q", f.GetName())
	}
	return nil
}

// raiseFileLimit lets this test hold its side of 10,000 connections.
func raiseFileLimit(t *testing.T) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
	l.Cur = l.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
}

func TestHostilePeers(t *testing.T) {
	raiseFileLimit(t)
	for _, srv := range []struct{ name, path string }{{"lisp", *lispServer}, {"go", *goServer}} {
		t.Run(srv.name, func(t *testing.T) {
			s := startServer(t, srv.name, srv.path)
			s.healthy(t, "before any attack", 512)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					c.run(t, s)
					s.healthy(t, "after the attack", c.bound(s))
				})
			}
			t.Logf("%s server after every attack: %.0f MiB RSS, %d threads", s.name, s.rssMiB(t), s.threads(t))
		})
	}
}
