// Package kcpserver runs a real kcp (a Kubernetes API server) for a
// benchmark or a test: `kcp start` in a root directory of its own, serving
// only on loopback, on free ports, ready once /readyz answers its admin.
// //go/kcpbench measures client-go against it, and //go/qps's LoadTest test
// installs grpc/test-infra's CRD into it.
package kcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
)

// ReadyTimeout bounds kcp's start-up: about 30 s on an idle machine, more
// when others are building.
const ReadyTimeout = 3 * time.Minute

// Server is a running kcp.
type Server struct {
	proc    *serverproc.Process
	Dir     string   // --root-directory: etcd data, certificates, admin.kubeconfig, kcp.log
	Args    []string // the kcp command line, for the record
	Config  *rest.Config
	logFile *os.File
}

// Start runs `kcp start` on free loopback ports, with extraArgs, and waits
// until /readyz answers. dir must be empty or absent.
func Start(ctx context.Context, binary, dir string, cpus cpuset.Set, extraArgs ...string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ports, err := serverproc.FreeLoopbackPorts(3)
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "kcp.log"))
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	args := append([]string{
		"start",
		"--root-directory=" + dir,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[0]),
		// The embedded etcd's ports default to 2379 and 2380; free ones let
		// two kcps (a test and a benchmark, say) run side by side.
		"--embedded-etcd-client-port=" + strconv.Itoa(ports[1]),
		"--embedded-etcd-peer-port=" + strconv.Itoa(ports[2]),
	}, extraArgs...)
	s := &Server{Dir: dir, Args: args, logFile: logFile}
	s.proc, err = serverproc.StartProbed(ctx, serverproc.Spec{
		Argv:         append([]string{binary}, args...),
		ReadyTimeout: ReadyTimeout,
		StopGrace:    15 * time.Second,
		Log:          logFile,
		Check:        serverproc.CheckLoopback,
		CPUs:         cpus,
		Cgroup:       true, // its own CPU pressure, where the host allows it
	}, addr, time.Second, func(ctx context.Context) error {
		cfg, err := readyz(ctx, s.Kubeconfig(), addr)
		if err == nil {
			s.Config = cfg
		}
		return err
	})
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("kcp: %w (log: %s)", err, logFile.Name())
	}
	return s, nil
}

// Cgroup is kcp's control groups, or nil if it has none.
func (s *Server) Cgroup() *cgroup.Group { return s.proc.Cgroup() }

// Kubeconfig is the admin kubeconfig kcp writes: contexts for the root
// workspace (user kcp-admin) and for the shard (user shard-admin).
func (s *Server) Kubeconfig() string { return filepath.Join(s.Dir, "admin.kubeconfig") }

// readyz is kcp's readiness: admin.kubeconfig has been written and
// https://ADDR/readyz answers 200 to the admin, over TLS checked against
// the kubeconfig's CA. It returns the kubeconfig's client config (current
// context: the root workspace).
func readyz(ctx context.Context, kubeconfig, addr string) (*rest.Config, error) {
	if _, err := os.Stat(kubeconfig); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/readyz", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/readyz: %s: %s", resp.Status, body)
	}
	return cfg, nil
}

// PID is kcp's process id, for the server CPU a benchmark measures.
func (s *Server) PID() int { return s.proc.PID() }

// ExitedEarly reports a kcp that crashed.
func (s *Server) ExitedEarly() error { return s.proc.ExitedEarly() }

// LogPath is where kcp's output goes.
func (s *Server) LogPath() string { return s.logFile.Name() }

// Stop stops kcp and closes its log.
func (s *Server) Stop() error {
	err := s.proc.Stop()
	return errors.Join(err, s.logFile.Close())
}
