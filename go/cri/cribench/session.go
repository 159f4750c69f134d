package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/go/cri/mockcri"
	cripb "github.com/grpcbench/grpcbench/proto/cri"
)

// probeTimeout bounds the unmeasured calls that open a session.
const probeTimeout = 30 * time.Second

// session is one connection to one server, which serves one inventory.
type session struct {
	conn      *grpc.ClientConn
	transport string // "unix" or "tcp"
	// containers and annotations are what the server serves, from an
	// unmeasured ListContainers (annotations: of its first container).
	containers, annotations int
	// debug is nil for a server without MockRuntimeDebug (a real runtime).
	debug cripb.MockRuntimeDebugClient
	// cpu reads the server process's CPU time; nil when the server runs in
	// this process (its work is in the client's numbers) or is unreadable.
	cpu harness.CPUSource
	// proc is the server process cri-bench started, or nil.
	proc *serverproc.Process
}

// openSession connects to ep with tune and probes what the server serves.
// proc is the server process when cri-bench started it.
func openSession(ctx context.Context, ep mockcri.Endpoint, proc *serverproc.Process, tune mockcri.Transport) (*session, error) {
	conn, err := mockcri.Dial(ep, tune.DialOptions()...)
	if err != nil {
		return nil, err
	}
	s := &session{conn: conn, transport: ep.Network, proc: proc}
	if err := s.probe(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: %w", ep, err)
	}
	return s, nil
}

func (s *session) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	resp, err := runtimeapi.NewRuntimeServiceClient(s.conn).ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return fmt.Errorf("ListContainers: %w", err)
	}
	s.containers = len(resp.Containers)
	if s.containers > 0 {
		s.annotations = len(resp.Containers[0].Annotations)
	}

	debug := cripb.NewMockRuntimeDebugClient(s.conn)
	mem, err := debug.MemStats(ctx, &cripb.MemStatsRequest{})
	switch {
	case status.Code(err) == codes.Unimplemented:
		// Not the mock: no server heap counters, nor its pid.
	case err != nil:
		return fmt.Errorf("MemStats: %w", err)
	default:
		s.debug = debug
	}

	pid := int(mem.GetPid())
	switch {
	case s.proc != nil:
		if s.debug != nil && pid != s.proc.PID() {
			return fmt.Errorf("the server at the endpoint is pid %d, not the one started (pid %d)", pid, s.proc.PID())
		}
		s.cpu = harness.NewServerCPU(s.proc.PID(), s.proc.Cgroup())
	case pid == os.Getpid():
		// In-process server: the client's CPU and heap include it.
		s.debug = nil
	case pid > 0:
		cpu := harness.NewProcessCPU(pid)
		if _, err := cpu.CPU(); err == nil {
			s.cpu = cpu
		}
	}
	if s.cpu == nil {
		s.debug = nil // heap counters without CPU would report half a server
	}
	return nil
}

func (s *session) close() error { return s.conn.Close() }
