// Package serverproc runs a benchmark's server as a child process: it starts
// the program, waits for its announcement ("listening on ADDR" as the first
// stdout line), reports a crash, and stops it (SIGTERM to its process group,
// SIGKILL after a grace period). The RouteGuide load generator and cri-bench
// share it, and tests log its output with TestLog.
package serverproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
	"github.com/grpcbench/grpcbench/go/bench/cpuset"
)

// Spec says how to run a server process.
type Spec struct {
	Argv         []string      // program and arguments
	Env          []string      // its environment as for exec.Cmd.Env (nil: this process's)
	ReadyTimeout time.Duration // for the "listening on ADDR" line
	StopGrace    time.Duration // from SIGTERM to SIGKILL
	// Log receives the server's stderr, and its stdout after the first
	// line, so that neither mixes into the benchmark's stdout table.
	Log io.Writer
	// Check vets the announced ADDR (nil: any); its error stops the server.
	Check func(addr string) error
	// Prepare, if set, adjusts the command before it starts: a working
	// directory, or a chroot and credentials in its SysProcAttr, which
	// already holds the process-group settings that Stop relies on.
	Prepare func(*exec.Cmd)
	// CPUs, if not empty, are the only CPUs the server may run on, from
	// its start (so that its runtime sizes its threads to them).
	CPUs cpuset.Set
	// Cgroup puts the server in control groups of its own (see package
	// cgroup) where the host allows it, so that its CPU time and pressure
	// can be read from them; without root it runs as if unset.
	Cgroup bool
	// CgroupName names the groups (grpcbench-NAME-...): the server's label
	// in the results, say; the program's base name if empty.
	CgroupName string
	// CPUQuota, if above 0, caps the server's CPU time at that many cores
	// by a CFS quota (it implies Cgroup). A quota that cannot be set fails
	// Start.
	CPUQuota float64
	// CPUPeriod is the CFS period of CPUQuota (0: cgroup.DefaultPeriod).
	CPUPeriod time.Duration
}

// Process is a started server. It runs in a process group of its own,
// so that Stop reaches anything it spawned, and so that a Ctrl-C at the
// terminal interrupts only the benchmark, which then stops the server
// in order instead of having it die in the middle of a scenario.
type Process struct {
	cmd   *exec.Cmd
	addr  string // the announced HOST:PORT
	grace time.Duration

	stdout *os.File // read end of the server's stdout

	exited  chan struct{} // closed once the process has been waited for
	waitErr error         // the exit status, once exited is closed

	group *cgroup.Group // the server's control groups, or nil

	runtimeMu sync.Mutex
	runtime   map[string]string // the server's "runtime ..." line (runtime.go)

	heap heapReports // the server's "heap ..." lines (heap.go)
	log  io.Writer   // Spec.Log, for what went wrong around the server

	stopping chan struct{} // closed when Stop begins
	stopOnce sync.Once
	stopErr  error
}

// Start starts spec.Argv and waits until it prints its first stdout line,
// "listening on ADDR", with an ADDR that spec.Check accepts. On any failure it
// stops the process before returning the error.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	// An explicit pipe rather than cmd.StdoutPipe: Wait closes the latter
	// as soon as the process exits, which could drop a line not yet read.
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p, err := launch(spec, stdoutW)
	stdoutW.Close() // the child has its copy; EOF comes when it is done
	if err != nil {
		stdoutR.Close()
		return nil, err
	}
	p.stdout = stdoutR
	firstLine := make(chan lineOrError, 1)
	go p.forwardStdout(stdoutR, spec.Log, firstLine)

	addr, err := p.awaitAnnouncement(ctx, firstLine, spec.ReadyTimeout, spec.Check)
	if err != nil {
		p.Stop()
		return nil, err
	}
	p.addr = addr
	return p, nil
}

// launch starts the server's process with stdout going to stdout, born
// in its control groups if spec asks for them, and reaps it (and removes
// the groups) when it exits.
func launch(spec Spec, stdout io.Writer) (*Process, error) {
	group, err := newGroup(spec)
	if err != nil {
		return nil, err
	}
	cmd, err := startCommand(spec, stdout, group, true)
	if err != nil && group != nil && cgroup.CloneRefused(err) {
		// A kernel or sandbox that will not clone into a cgroup: born in
		// the v1 quota group still, where there is one, and moved into
		// the v2 group once started.
		cmd, err = startCommand(spec, stdout, group, false)
		if err == nil {
			if addErr := group.AddToTracking(cmd.Process.Pid); addErr != nil && spec.CPUQuota > 0 {
				err = fmt.Errorf("moving the server into its cgroup: %w", addErr)
				cmd.Process.Kill()
				cmd.Wait()
			}
		}
	}
	if err != nil && group != nil && spec.CPUQuota <= 0 {
		// Tracking is a nicety: a host that will not put the server in
		// its group still runs it.
		group.Remove()
		group = nil
		cmd, err = startCommand(spec, stdout, nil, false)
	}
	if err != nil {
		if group != nil {
			group.Remove()
		}
		return nil, err
	}
	p := &Process{
		cmd: cmd, grace: spec.StopGrace, group: group, log: spec.Log,
		exited: make(chan struct{}), stopping: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		if group != nil {
			// Empty now, so the kernel lets it go; a child the server left
			// running would keep it (the next New sweeps it once it is gone).
			if err := group.Remove(); err != nil && spec.Log != nil {
				fmt.Fprintf(spec.Log, "serverproc: %v\n", err)
			}
		}
		close(p.exited)
	}()
	return p, nil
}

// startCommand starts the server's command on spec's CPUs, born in group
// if it is not nil (cloned into its v2 group if cloneInto): its runtime
// then sizes itself to the CPUs and the quota it will run with from its
// first instruction.
func startCommand(spec Spec, stdout io.Writer, group *cgroup.Group, cloneInto bool) (*exec.Cmd, error) {
	cmd := newCommand(spec, stdout)
	start := func() error { return startOn(cmd, spec.CPUs) }
	if group == nil {
		return cmd, start()
	}
	if cmd.SysProcAttr == nil { // a Prepare that cleared it
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	err := group.Start(cmd.SysProcAttr, start, cloneInto)
	if err != nil && cmd.Process != nil {
		// Started, in its groups; only the starting thread could not be
		// moved back to where it was (Start says where it went).
		if spec.Log != nil {
			fmt.Fprintf(spec.Log, "serverproc: %v\n", err)
		}
		err = nil
	}
	return cmd, err
}

// newGroup makes the server's control groups as spec asks: nil if it asks
// for none, or if it asks only to be tracked and the host does not allow
// it; an error if a quota cannot be set.
func newGroup(spec Spec) (*cgroup.Group, error) {
	if !spec.Cgroup && spec.CPUQuota <= 0 {
		return nil, nil
	}
	name := spec.CgroupName
	if name == "" {
		name = filepath.Base(spec.Argv[0])
	}
	g, err := cgroup.New(cgroup.Detect(cgroup.Root), name, cgroup.Quota{Cores: spec.CPUQuota, Period: spec.CPUPeriod})
	if err != nil && spec.CPUQuota > 0 {
		return nil, err
	}
	if err != nil {
		return nil, nil // tracking is a nicety: the host's pressure is still read
	}
	return g, nil
}

// newCommand is the server's command as spec says, with stdout going to
// stdout and stderr to spec.Log, in a process group of its own.
func newCommand(spec Spec, stdout io.Writer) *exec.Cmd {
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Env = spec.Env
	cmd.Stdout = stdout
	cmd.Stderr = spec.Log
	cmd.SysProcAttr = serverProcAttr()
	if spec.Prepare != nil {
		spec.Prepare(cmd)
	}
	// Wait also waits for the copy of stderr to end; a leftover child
	// still holding the pipe must not hide that the server has exited.
	cmd.WaitDelay = time.Second
	return cmd
}

type lineOrError struct {
	line string
	err  error
}

// forwardStdout hands the first line of r to first and copies the rest to
// log, noting a "runtime ..." line (p.noteRuntime) and "heap ..." lines
// (p.heap) on the way. Lines are
// read into a fixed buffer, so a server that writes without a newline
// cannot make it grow without bound.
func (p *Process) forwardStdout(r io.Reader, log io.Writer, first chan<- lineOrError) {
	br := bufio.NewReaderSize(r, 4096)
	line, err := br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		err = fmt.Errorf("first stdout line longer than %d bytes", br.Size())
	case errors.Is(err, io.EOF):
		err = errors.New("stdout closed before a complete first line")
	}
	first <- lineOrError{string(line), err}
	if err != nil {
		return
	}
	// Until EOF, or the read end is closed by Stop. A line longer than the
	// buffer is copied in pieces; only the whole line right after the
	// announcement may be the runtime line. A failing log does not stop
	// the draining: the server must never block on its stdout.
	for line, continued := 0, false; ; {
		piece, err := br.ReadSlice('\n')
		if err == nil && !continued {
			if line == 0 {
				p.noteRuntime(string(piece))
			} else {
				p.heap.note(string(piece))
			}
		}
		if len(piece) > 0 && log != nil {
			log.Write(piece)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
		continued = err != nil
		if !continued {
			line++
		}
	}
}

// awaitAnnouncement waits for the first stdout line and parses it.
func (p *Process) awaitAnnouncement(ctx context.Context, firstLine <-chan lineOrError, timeout time.Duration, check func(string) error) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case got := <-firstLine:
		if got.err != nil {
			return "", p.describeFailure(got.err)
		}
		return ParseAnnouncement(got.line, check)
	case <-timer.C:
		return "", fmt.Errorf("server printed no \"listening on HOST:PORT\" line within %v", timeout)
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for the server to listen: %w", ctx.Err())
	}
}

// describeFailure adds the exit status to a stdout error when the process
// has exited (or does so promptly), the usual reason stdout ends early.
func (p *Process) describeFailure(err error) error {
	select {
	case <-p.exited:
		return fmt.Errorf("server exited (%v) before announcing its address: %w", exitDescription(p.waitErr), err)
	case <-time.After(time.Second):
		return fmt.Errorf("server did not announce its address: %w", err)
	}
}

// ParseAnnouncement is the ADDR of a server's announcement, the line "listening on ADDR",
// vetted by check (nil: any ADDR). A server's own tests check its output with it.
func ParseAnnouncement(line string, check func(string) error) (string, error) {
	line = strings.TrimRight(line, "\r\n")
	addr, ok := strings.CutPrefix(line, "listening on ")
	if !ok {
		return "", fmt.Errorf("server's first stdout line is %q, want \"listening on ADDR\"", line)
	}
	if check != nil {
		if err := check(addr); err != nil {
			return "", fmt.Errorf("server announced %v", err)
		}
	}
	return addr, nil
}

// Addr is the address the server announced.
func (p *Process) Addr() string { return p.addr }

// PID is the server's process id, for harness.NewProcessCPU.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Cgroup is the server's control groups, or nil if it has none.
func (p *Process) Cgroup() *cgroup.Group { return p.group }

// ExitedEarly returns a non-nil error if the server has exited although Stop
// was not called: a crash, which fails the scenario it happened in.
func (p *Process) ExitedEarly() error {
	select {
	case <-p.stopping:
		return nil // checked first: after Stop, both channels are closed
	default:
	}
	select {
	case <-p.exited:
		return fmt.Errorf("server exited unexpectedly (%v)", exitDescription(p.waitErr))
	default:
		return nil
	}
}

// Stop ends the server: SIGTERM to its process group, then SIGKILL if it has
// not exited after the grace period. It returns once the process has been
// reaped, and reports a server that had to be killed or could not be. It is
// safe to call more than once and from several goroutines.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		close(p.stopping)
		p.stopErr = p.terminate()
		if p.stdout != nil { // nil for StartProbed, whose stdout goes to the log directly
			p.stdout.Close() // ends forwardStdout's copy, if still running
		}
	})
	return p.stopErr
}

func (p *Process) terminate() error {
	select {
	case <-p.exited:
		return nil // it already exited; ExitedEarly has told the run
	default:
	}
	if err := signalServer(p.cmd.Process, sigTerm); err != nil {
		return fmt.Errorf("stopping server: %w", err)
	}
	grace := time.NewTimer(p.grace)
	defer grace.Stop()
	select {
	case <-p.exited:
		return nil
	case <-grace.C:
	}
	if err := signalServer(p.cmd.Process, sigKill); err != nil {
		return fmt.Errorf("killing server after %v: %w", p.grace, err)
	}
	// SIGKILL cannot be caught; only a process stuck in the kernel
	// survives it for long, and then there is nothing more to do.
	select {
	case <-p.exited:
		return fmt.Errorf("server did not stop within %v of SIGTERM; killed it", p.grace)
	case <-time.After(5 * time.Second):
		return fmt.Errorf("server (pid %d) did not exit even after SIGKILL", p.PID())
	}
}

// exitDescription says how a process ended, from cmd.Wait's error.
func exitDescription(waitErr error) string {
	if waitErr == nil {
		return "exit status 0"
	}
	return waitErr.Error()
}

// startOn starts cmd, confined to cpus from its first instruction if cpus
// is not empty.
func startOn(cmd *exec.Cmd, cpus cpuset.Set) error {
	if len(cpus) > 0 {
		return cpuset.WithThreadAffinity(cpus, cmd.Start)
	}
	return cmd.Start()
}
