package serverproc

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"
)

// FreeLoopbackPort is a TCP port on 127.0.0.1 that was free a moment ago,
// for a server that must be told its port (it may be taken again before
// the server binds it; StartListeningForTest then fails plainly).
func FreeLoopbackPort() (int, error) {
	ports, err := FreeLoopbackPorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreeLoopbackPorts is n distinct TCP ports on 127.0.0.1 that were free a
// moment ago: all n are held open at once, so no two are the same, then
// released together for a server that must be told them.
func FreeLoopbackPorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// StartListeningOn starts a server that announces nothing on stdout but
// serves on the port it is given: argv(port) is its command line, and
// spec.Argv is ignored. It is ready once 127.0.0.1:port accepts a
// connection.
func StartListeningOn(spec Spec, argv func(port string) []string) (*Process, error) {
	port, err := FreeLoopbackPort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	spec.Argv = argv(strconv.Itoa(port))
	return StartProbed(context.Background(), spec, addr, 100*time.Millisecond, func(ctx context.Context) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err
	})
}

// StartListeningForTest is StartListeningOn for a test: output goes to the
// test's log, and the server is stopped when the test ends.
func StartListeningForTest(t testing.TB, name string, argv func(port string) []string, ready, grace time.Duration) *Process {
	t.Helper()
	p, err := StartListeningOn(Spec{ReadyTimeout: ready, StopGrace: grace, Log: TestLog(t, name), Check: CheckLoopback}, argv)
	if err != nil {
		t.Fatalf("starting the %s server: %v", name, err)
	}
	t.Cleanup(func() { p.Stop() })
	return p
}
