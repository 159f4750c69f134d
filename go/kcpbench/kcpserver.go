package main

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

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kcpReadyTimeout bounds kcp's start-up: about 30 s on an idle machine, more
// when others are building.
const kcpReadyTimeout = 3 * time.Minute

// kcpServer is a kcp started for the benchmark, in a root directory of its
// own, serving only on loopback.
type kcpServer struct {
	proc    *serverproc.Process
	dir     string   // --root-directory: etcd data, certificates, admin.kubeconfig, kcp.log
	Args    []string // the kcp command line, for the record
	Config  *rest.Config
	logFile *os.File
}

// startKCP runs `kcp start` on free loopback ports and waits until /readyz
// answers and the benchmark's namespace exists. dir must be empty or absent.
func startKCP(ctx context.Context, binary, dir, featureGates string) (*kcpServer, error) {
	// Before anything of client-go runs: the readiness probe's transport
	// already reads client-go's feature gates (the TLS cache ones).
	enableClientCBOR()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "kcp.log"))
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	args := []string{
		"start",
		"--root-directory=" + dir,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[0]),
		// The embedded etcd's ports default to 2379 and 2380; free ones let
		// two benchmarks (or a test and a benchmark) run side by side.
		"--embedded-etcd-client-port=" + strconv.Itoa(ports[1]),
		"--embedded-etcd-peer-port=" + strconv.Itoa(ports[2]),
	}
	if featureGates != "" {
		args = append(args, "--feature-gates="+featureGates)
	}
	s := &kcpServer{dir: dir, Args: args, logFile: logFile}
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	s.proc, err = serverproc.StartProbed(ctx, serverproc.Spec{
		Argv:         append([]string{binary}, args...),
		ReadyTimeout: kcpReadyTimeout,
		StopGrace:    15 * time.Second,
		Log:          logFile,
		Check:        serverproc.CheckLoopback,
	}, addr, time.Second, func(ctx context.Context) error {
		cfg, err := readyz(ctx, kubeconfig, addr)
		if err == nil {
			s.Config = cfg
		}
		return err
	})
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("kcp: %w (log: %s)", err, logFile.Name())
	}
	if err := ensureNamespace(ctx, s.Config, benchNamespace); err != nil {
		s.Stop()
		return nil, fmt.Errorf("kcp: %w (log: %s)", err, logFile.Name())
	}
	return s, nil
}

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

// ensureNamespace creates the namespace the ConfigMaps live in, retrying
// while kcp finishes setting up the root workspace behind /readyz.
func ensureNamespace(ctx context.Context, cfg *rest.Config, name string) error {
	cs, err := newClientset(cfg, mediaJSON)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
		time.Sleep(time.Second)
	}
}

// PID is kcp's process id, for the server CPU the harness measures.
func (s *kcpServer) PID() int { return s.proc.PID() }

// ExitedEarly reports a kcp that crashed during the run.
func (s *kcpServer) ExitedEarly() error { return s.proc.ExitedEarly() }

// LogPath is where kcp's output goes.
func (s *kcpServer) LogPath() string { return s.logFile.Name() }

// Stop stops kcp and closes its log.
func (s *kcpServer) Stop() error {
	err := s.proc.Stop()
	return errors.Join(err, s.logFile.Close())
}

// freePorts finds n distinct free TCP ports on 127.0.0.1 by listening on
// port 0 with all n listeners open at once, then closing them.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
