package qps_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
)

// enterNetNS, set in a child's environment, makes this test binary a
// trampoline: it joins the network namespace open on descriptor 3 and
// executes its arguments there. Go cannot start a child in a namespace
// that already exists, but execve keeps the calling thread's namespaces.
const enterNetNS = "QPS_TEST_ENTER_NETNS"

func TestMain(m *testing.M) {
	if os.Getenv(enterNetNS) != "" {
		runtime.LockOSThread()
		if err := unix.Setns(3, unix.CLONE_NEWNET); err != nil {
			fmt.Fprintf(os.Stderr, "joining the network namespace: %v\n", err)
			os.Exit(111)
		}
		env := slicesWithout(os.Environ(), enterNetNS+"=")
		err := syscall.Exec(os.Args[1], os.Args[1:], env)
		fmt.Fprintf(os.Stderr, "executing %s: %v\n", os.Args[1], err)
		os.Exit(111)
	}
	os.Exit(m.Run())
}

func slicesWithout(env []string, prefix string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// host is one of the test's machines: a network namespace with one
// interface on the test's network.
type host struct {
	name string
	ns   netns.NsHandle
	addr string // its IPv4 address on the test network
}

// hosts are the three machines of a cross-host run.
type hosts struct {
	server, client, driver host
	delay                  time.Duration // one-way netem delay on each host's link, 0 if unavailable
}

// makeHosts creates three network namespaces joined through a bridge in a
// fourth, each with its own address on 10.77.0.0/24 and, where the kernel
// has netem, a one-way delay on its link. Everything goes when the test
// ends (the namespaces live only as long as descriptors and processes hold
// them). It returns an error where namespaces are not permitted.
//
// The namespaces are made on a thread of their own that never returns to
// the test's namespace (inside Bazel's sandbox it may not: that one belongs
// to the host); the thread ends with its goroutine. Netlink sockets stay in
// the namespace they were opened in, so each namespace is configured
// through a socket opened while the thread was in it.
func makeHosts(t *testing.T, delay time.Duration) (*hosts, error) {
	t.Helper()
	type made struct {
		h   *hosts
		all []netns.NsHandle
		err error
	}
	done := make(chan made, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is discarded
		var m made
		m.h, m.all, m.err = buildHosts(delay)
		done <- m
	}()
	m := <-done
	t.Cleanup(func() {
		for _, ns := range m.all {
			ns.Close()
		}
	})
	return m.h, m.err
}

// enterNewNS moves the calling (locked) thread into a new network namespace
// and returns it with a netlink handle opened there.
func enterNewNS() (netns.NsHandle, *netlink.Handle, error) {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return netns.None(), nil, fmt.Errorf("creating a network namespace: %w", err)
	}
	ns, err := netns.Get()
	if err != nil {
		return netns.None(), nil, err
	}
	h, err := netlink.NewHandle()
	if err != nil {
		ns.Close()
		return netns.None(), nil, err
	}
	return ns, h, nil
}

func buildHosts(delay time.Duration) (*hosts, []netns.NsHandle, error) {
	var all []netns.NsHandle
	hub, hubLinks, err := enterNewNS()
	if err != nil {
		return nil, all, err
	}
	all = append(all, hub)
	defer hubLinks.Close()
	bridge := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "qpsbr"}}
	if err := hubLinks.LinkAdd(bridge); err != nil {
		return nil, all, fmt.Errorf("bridge: %w", err)
	}
	if err := hubLinks.LinkSetUp(bridge); err != nil {
		return nil, all, err
	}
	h := &hosts{delay: delay}
	for i, hp := range []*host{&h.server, &h.client, &h.driver} {
		hp.name = []string{"server", "client", "driver"}[i]
		hp.addr = fmt.Sprintf("10.77.0.%d", i+1)
		var links *netlink.Handle
		if hp.ns, links, err = enterNewNS(); err != nil {
			return nil, all, err
		}
		all = append(all, hp.ns)
		hubEnd := fmt.Sprintf("qps%d", i)
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: hubEnd, MasterIndex: bridge.Index},
			PeerName: "eth0", PeerNamespace: netlink.NsFd(int(hp.ns))}
		err := hubLinks.LinkAdd(veth)
		if err == nil {
			err = hubLinks.LinkSetUp(veth)
		}
		if err == nil {
			err = configureHost(links, hp, &h.delay)
		}
		links.Close()
		if err != nil {
			return nil, all, fmt.Errorf("%s: %w", hp.name, err)
		}
	}
	return h, all, nil
}

// configureHost brings up a host's loopback and eth0 with its address, and
// adds the delay to eth0 (setting *delay to 0 where netem is missing),
// through links, a netlink handle in the host's namespace.
func configureHost(links *netlink.Handle, hp *host, delay *time.Duration) error {
	for _, name := range []string{"lo", "eth0"} {
		l, err := links.LinkByName(name)
		if err != nil {
			return err
		}
		if name == "eth0" {
			addr, _ := netlink.ParseAddr(hp.addr + "/24")
			if err := links.AddrAdd(l, addr); err != nil {
				return err
			}
			if *delay > 0 {
				netem := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Parent: netlink.HANDLE_ROOT,
					Handle: netlink.MakeHandle(1, 0)}, netlink.NetemQdiscAttrs{Latency: uint32(delay.Microseconds())})
				if err := links.QdiscAdd(netem); err != nil {
					*delay = 0 // no sch_netem in this kernel: the hosts are joined without delay
				}
			}
		}
		if err := links.LinkSetUp(l); err != nil {
			return err
		}
	}
	return nil
}

// startOn runs argv on host hp (in its network namespace), its output in
// the test's log, and kills it when the test ends.
func startOn(t *testing.T, hp host, name string, argv ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The child gets its own copy of the namespace's descriptor, closed
	// here once it has started: the test keeps the original.
	fd, err := unix.Dup(int(hp.ns))
	if err != nil {
		t.Fatal(err)
	}
	nsFile := os.NewFile(uintptr(fd), hp.name+" netns")
	defer nsFile.Close()
	cmd := exec.Command(self, argv...)
	cmd.Env = append(os.Environ(), enterNetNS+"=1")
	cmd.ExtraFiles = []*os.File{nsFile}
	cmd.Stdout = serverproc.TestLog(t, name)
	cmd.Stderr = serverproc.TestLog(t, name)
	// Pdeathsig fires when the forking OS thread exits: safe here, because
	// the test's goroutine forks from a thread it never locks (only
	// makeHosts's own goroutine locks, and discards, its thread).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// The driver, the server worker and the client worker each on a host of
// its own: three network namespaces joined by veth pairs through a bridge,
// with a delay on every link where the kernel has netem. The client
// reaches the server only through the server host's address. Where
// namespaces are not permitted, the same three processes run on loopback,
// and the test says so.
func TestWorkersAcrossHosts(t *testing.T) {
	if *driver == "" || *goWorker == "" || *lispWorker == "" {
		t.Skip("-driver, -go_worker and -lisp_worker are needed; run under `tools/bazel test //go/qps:qps_test`")
	}
	const delay = time.Millisecond
	h, err := makeHosts(t, delay)
	if err != nil {
		t.Logf("network namespaces are not permitted here (%v): the driver and workers run as separate processes on loopback instead", err)
		crossHostsOnLoopback(t)
		return
	}
	t.Logf("hosts: server %s, client %s, driver %s; one-way delay on each link: %v", h.server.addr, h.client.addr, h.driver.addr, h.delay)
	for _, pair := range [][2]workerKind{{lispKind, goKind}, {goKind, lispKind}} {
		server, client := pair[0], pair[1]
		t.Run(server.name+"_server_"+client.name+"_client", func(t *testing.T) {
			startOn(t, h.server, server.name+" server worker", hostWorkerArgv(server, "10000")...)
			startOn(t, h.client, client.name+" client worker", hostWorkerArgv(client, "10000")...)
			out := filepath.Join(t.TempDir(), "result.json")
			d := startOn(t, h.driver, "driver", runfile.Path(*driver),
				"--qps_workers="+h.server.addr+":10000,"+h.client.addr+":10000",
				"--scenarios_json="+scenario("across_hosts", "UNARY", 2, 4, 64, 2),
				"--scenario_result_file="+out, "--setup_timeout=30s")
			waitExit(t, d, 90*time.Second)
			r := readResult(t, out)
			targets := r.Scenario.GetClientConfig().GetServerTargets()
			if len(targets) != 1 || !strings.HasPrefix(targets[0], h.server.addr+":") {
				t.Errorf("server targets %v; want the server host's %s", targets, h.server.addr)
			}
			checkResultFile(t, r, 2)
			// Each host delays what it sends, so a round trip crosses two delayed
			// links: one each way.
			if h.delay > 0 && r.Summary.Latency_50 < float64(2*h.delay.Nanoseconds()) {
				t.Errorf("p50 latency %.0f µs is below the %v round trip the links add", r.Summary.Latency_50/1e3, 2*h.delay)
			}
		})
	}
}

func hostWorkerArgv(k workerKind, port string) []string {
	argv := k.argv(runfile.Path(*k.rlocation), port)
	if k.name == "lisp" {
		// Listen on the host's address, not only on its loopback.
		argv = append(argv[:len(argv)-2], "-host", "0.0.0.0")
	}
	return argv
}

func waitExit(t *testing.T, cmd *exec.Cmd, timeout time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the driver failed: %v", err)
		}
	case <-time.After(timeout):
		t.Fatalf("the driver did not finish within %v", timeout)
	}
}

func readResult(t *testing.T, path string) *testpb.ScenarioResult {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r testpb.ScenarioResult
	if err := protojson.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// checkResultFile is checkResult for a result read from its file.
func checkResultFile(t *testing.T, r *testpb.ScenarioResult, seconds float64) {
	t.Helper()
	if len(r.ClientStats) != 1 || len(r.ServerStats) != 1 {
		t.Fatalf("%d client and %d server statistics", len(r.ClientStats), len(r.ServerStats))
	}
	for _, ok := range append(r.ClientSuccess, r.ServerSuccess...) {
		if !ok {
			t.Errorf("a worker did not end cleanly")
		}
	}
	if e := r.ClientStats[0].TimeElapsed; e < seconds*0.25 || e > seconds*2 {
		t.Errorf("the client measured %.2f s, the scenario says %v", e, seconds)
	}
	if n := r.Latencies.GetCount(); n < 100 {
		t.Errorf("%v calls", n)
	}
}

// crossHostsOnLoopback is the fallback: the same processes, on loopback.
func crossHostsOnLoopback(t *testing.T) {
	_, serverAddr := startKind(t, "lisp server worker", lispKind)
	_, clientAddr := startKind(t, "go client worker", goKind)
	run := runDriver(t, 90*time.Second, []string{serverAddr, clientAddr}, "--scenarios_json="+scenario("loopback", "UNARY", 2, 4, 64, 2))
	checkResult(t, run, serverAddr, 2)
	if host, _, _ := net.SplitHostPort(serverAddr); host != "127.0.0.1" {
		t.Errorf("fallback server at %s, want loopback", serverAddr)
	}
}
