package main

import (
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/grpcbench/grpcbench/go/routeguide/features"
	"github.com/grpcbench/grpcbench/go/routeguide/service"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

// startTestServer serves the real RouteGuide service over db on a loopback
// port for the rest of the test, and returns its address.
func startTestServer(t *testing.T, db *features.DB, opts ...service.Option) string {
	t.Helper()
	return serveTest(t, listenTest(t), db, opts...)
}

// startCountingTestServer is startTestServer over the default database,
// counting the connections it accepts and holds.
func startCountingTestServer(t *testing.T) (string, *countingListener) {
	t.Helper()
	lis := &countingListener{Listener: listenTest(t)}
	return serveTest(t, lis, features.Default()), lis
}

// countingListener counts the connections it accepts, those still open,
// and the most ever open at once.
type countingListener struct {
	net.Listener
	mu                   sync.Mutex
	accepted, open, peak int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepted++
	l.open++
	l.peak = max(l.peak, l.open)
	return &countedConn{Conn: c, l: l}, nil
}

// counts returns the connections accepted, open now and open at most.
func (l *countingListener) counts() (accepted, open, peak int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted, l.open, l.peak
}

// countedConn tells its listener when it closes (once).
type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

func listenTest(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

// serveTest serves the RouteGuide service over db on lis for the rest of
// the test, and returns its address.
func serveTest(t *testing.T, lis net.Listener, db *features.DB, opts ...service.Option) string {
	t.Helper()
	srv := grpc.NewServer()
	pb.RegisterRouteGuideServer(srv, service.New(db, opts...))
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// startBrokenServer serves answers that are well-formed but wrong for the
// load generator's inputs: a one-feature database in which the GetFeature
// point has another name, and a RouteChat store that keeps one note per
// location.
func startBrokenServer(t *testing.T) string {
	t.Helper()
	db, err := features.Parse([]byte(`[{"name": "Somewhere else",
		"location": {"latitude": 409146138, "longitude": -746188906}}]`))
	if err != nil {
		t.Fatal(err)
	}
	return startTestServer(t, db, service.WithNoteLimits(1, 1000))
}
