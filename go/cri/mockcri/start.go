package mockcri

import (
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
)

// Running is a mock runtime serving in this process, for tests and for
// benchmark clients that run the server in-process.
type Running struct {
	// Endpoint is where it listens, with the port resolved for TCP.
	Endpoint Endpoint
	srv      *grpc.Server
	done     chan error
}

// Start serves inv on e with grpc-go's default transport in the
// background until Stop.
func Start(inv *Inventory, e Endpoint, opts ...grpc.ServerOption) (*Running, error) {
	lis, bound, err := Listen(e)
	if err != nil {
		return nil, err
	}
	r := &Running{Endpoint: bound, srv: NewServer(inv, Transport{}, opts...), done: make(chan error, 1)}
	go func() { r.done <- r.srv.Serve(lis) }()
	return r, nil
}

// Stop closes every connection at once and waits for Serve to return; the
// unix socket file goes with the listener.
func (r *Running) Stop() {
	r.srv.Stop()
	<-r.done
}

// maxSocketPath is what fits in sockaddr_un.sun_path (108 bytes on Linux,
// 104 on the BSDs) with its terminating NUL, with room for a file name.
const maxSocketPath = 103

// SocketDir creates a fresh directory for a unix socket named name and
// returns the socket's path. It is under os.TempDir() when that path fits
// in a socket address, and under /tmp otherwise: Bazel's test TMPDIR is
// often too deep. The caller removes the directory.
func SocketDir(name string) (dir, socket string, err error) {
	for _, parent := range []string{os.TempDir(), "/tmp"} {
		if len(filepath.Join(parent, "mockcri-0123456789", name)) > maxSocketPath {
			continue
		}
		dir, err := os.MkdirTemp(parent, "mockcri-")
		if err != nil {
			return "", "", err
		}
		return dir, filepath.Join(dir, name), nil
	}
	return "", "", fmt.Errorf("no temporary directory short enough for a unix socket named %q", name)
}
