package mockcri

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Endpoint is where a CRI server listens, written as kubelet's
// --container-runtime-endpoint and crictl's --runtime-endpoint are:
// "unix:///run/mockcri.sock", or for the mock also "tcp://127.0.0.1:PORT".
// TCP is loopback-only: the mock is a benchmark peer on the same machine.
type Endpoint struct {
	Network string // "unix" or "tcp"
	Address string // an absolute socket path, or HOST:PORT
}

// ParseEndpoint parses "unix:///PATH", "tcp://HOST:PORT" (HOST a loopback
// address or localhost), or, as crictl still accepts, a bare absolute
// socket path.
func ParseEndpoint(s string) (Endpoint, error) {
	switch {
	case strings.HasPrefix(s, "unix://"):
		path := strings.TrimPrefix(s, "unix://")
		if !filepath.IsAbs(path) {
			return Endpoint{}, fmt.Errorf("endpoint %q: want unix:///ABSOLUTE/PATH", s)
		}
		return Endpoint{"unix", path}, nil
	case strings.HasPrefix(s, "tcp://"):
		addr := strings.TrimPrefix(s, "tcp://")
		if err := checkLoopback(addr); err != nil {
			return Endpoint{}, fmt.Errorf("endpoint %q: %w", s, err)
		}
		return Endpoint{"tcp", addr}, nil
	case filepath.IsAbs(s):
		return Endpoint{"unix", s}, nil
	}
	return Endpoint{}, fmt.Errorf("endpoint %q: want unix:///PATH or tcp://127.0.0.1:PORT", s)
}

// checkLoopback accepts HOST:PORT with a loopback HOST.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("host %q is not a loopback address", host)
	}
	return nil
}

// String formats e as ParseEndpoint reads it.
func (e Endpoint) String() string { return e.Network + "://" + e.Address }

// Target is e as a gRPC client target. TCP goes through the passthrough
// resolver: the address is already an IP or localhost, no DNS needed.
func (e Endpoint) Target() string {
	if e.Network == "unix" {
		return "unix://" + e.Address
	}
	return "passthrough:///" + e.Address
}

// Listen binds e and returns the listener and the endpoint it is bound to
// (the chosen port for tcp://127.0.0.1:0). A unix socket file left behind
// by a server that died is removed first, as containerd does; one that
// still answers, or any other kind of file, is an error.
func Listen(e Endpoint) (net.Listener, Endpoint, error) {
	if e.Network == "unix" {
		if err := removeStaleSocket(e.Address); err != nil {
			return nil, Endpoint{}, err
		}
	}
	lis, err := net.Listen(e.Network, e.Address)
	if err != nil {
		return nil, Endpoint{}, err
	}
	return lis, Endpoint{e.Network, lis.Addr().String()}, nil
}

func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	if conn, err := net.DialTimeout("unix", path, time.Second); err == nil {
		conn.Close()
		return fmt.Errorf("%s: another server is listening there", path)
	}
	return os.Remove(path)
}
