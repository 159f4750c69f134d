package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// How long a server may take to announce itself, and to stop. SBCL servers
// start by mapping and possibly decompressing a core of tens of megabytes,
// under qemu for arm64, so readiness gets a generous bound. The stop grace
// is longer than the Go server's own graceful-shutdown timeout (5s), so a
// healthy server always finishes on its own.
const (
	serverReadyTimeout = 30 * time.Second
	serverStopGrace    = 10 * time.Second
)

// serverSpec says how to run a server process.
type serverSpec struct {
	argv         []string      // program and arguments
	readyTimeout time.Duration // for the "listening on HOST:PORT" line
	stopGrace    time.Duration // from SIGTERM to SIGKILL
	// log receives the server's stderr, and its stdout after the first
	// line, so that neither mixes into the load generator's stdout table.
	log io.Writer
}

// serverProcess is a started server. It runs in a process group of its own,
// so that stop reaches anything it spawned, and so that a Ctrl-C at the
// terminal interrupts only the load generator, which then stops the server
// in order instead of having it die in the middle of a scenario.
type serverProcess struct {
	cmd   *exec.Cmd
	addr  string // the announced HOST:PORT
	grace time.Duration

	stdout *os.File // read end of the server's stdout

	exited  chan struct{} // closed once the process has been waited for
	waitErr error         // the exit status, once exited is closed

	stopping chan struct{} // closed when stop begins
	stopOnce sync.Once
	stopErr  error
}

// startServer starts spec.argv and waits until it prints its first stdout
// line, "listening on HOST:PORT" with a loopback HOST. On any failure it
// stops the process before returning the error.
func startServer(ctx context.Context, spec serverSpec) (*serverProcess, error) {
	// An explicit pipe rather than cmd.StdoutPipe: Wait closes the latter
	// as soon as the process exits, which could drop a line not yet read.
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(spec.argv[0], spec.argv[1:]...)
	cmd.Stdout = stdoutW
	cmd.Stderr = spec.log
	cmd.SysProcAttr = serverProcAttr()
	// Wait also waits for the copy of stderr to end; a leftover child
	// still holding the pipe must not hide that the server has exited.
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	stdoutW.Close() // the child has its copy; EOF comes when it is done
	if err != nil {
		stdoutR.Close()
		return nil, err
	}

	p := &serverProcess{
		cmd: cmd, grace: spec.stopGrace, stdout: stdoutR,
		exited: make(chan struct{}), stopping: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	firstLine := make(chan lineOrError, 1)
	go forwardStdout(stdoutR, spec.log, firstLine)

	addr, err := p.awaitAnnouncement(ctx, firstLine, spec.readyTimeout)
	if err != nil {
		p.stop()
		return nil, err
	}
	p.addr = addr
	return p, nil
}

type lineOrError struct {
	line string
	err  error
}

// forwardStdout hands the first line of r to first and copies the rest to
// log. The line is read into a fixed buffer, so a server that writes
// without a newline cannot make it grow without bound.
func forwardStdout(r io.Reader, log io.Writer, first chan<- lineOrError) {
	br := bufio.NewReaderSize(r, 4096)
	line, err := br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		err = fmt.Errorf("first stdout line longer than %d bytes", br.Size())
	case errors.Is(err, io.EOF):
		err = errors.New("stdout closed before a complete first line")
	}
	first <- lineOrError{string(line), err}
	if err == nil {
		io.Copy(log, br) // until EOF, or the read end is closed by stop
	}
}

// awaitAnnouncement waits for the first stdout line and parses it.
func (p *serverProcess) awaitAnnouncement(ctx context.Context, firstLine <-chan lineOrError, timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case got := <-firstLine:
		if got.err != nil {
			return "", p.describeFailure(got.err)
		}
		return parseListenLine(got.line)
	case <-timer.C:
		return "", fmt.Errorf("server printed no \"listening on HOST:PORT\" line within %v", timeout)
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for the server to listen: %w", ctx.Err())
	}
}

// describeFailure adds the exit status to a stdout error when the process
// has exited (or does so promptly), the usual reason stdout ends early.
func (p *serverProcess) describeFailure(err error) error {
	select {
	case <-p.exited:
		return fmt.Errorf("server exited (%v) before announcing its address: %w", exitDescription(p.waitErr), err)
	case <-time.After(time.Second):
		return fmt.Errorf("server did not announce its address: %w", err)
	}
}

// parseListenLine reads the server's announcement, "listening on HOST:PORT".
func parseListenLine(line string) (string, error) {
	line = strings.TrimRight(line, "\r\n")
	addr, ok := strings.CutPrefix(line, "listening on ")
	if !ok {
		return "", fmt.Errorf("server's first stdout line is %q, want \"listening on HOST:PORT\"", line)
	}
	if err := checkLoopback(addr); err != nil {
		return "", fmt.Errorf("server announced %v", err)
	}
	return addr, nil
}

// pid is the server's process id, for harness.NewProcessCPU.
func (p *serverProcess) pid() int { return p.cmd.Process.Pid }

// exitedEarly returns a non-nil error if the server has exited although stop
// was not called: a crash, which fails the scenario it happened in.
func (p *serverProcess) exitedEarly() error {
	select {
	case <-p.stopping:
		return nil // checked first: after stop, both channels are closed
	default:
	}
	select {
	case <-p.exited:
		return fmt.Errorf("server exited unexpectedly (%v)", exitDescription(p.waitErr))
	default:
		return nil
	}
}

// stop ends the server: SIGTERM to its process group, then SIGKILL if it has
// not exited after the grace period. It returns once the process has been
// reaped, and reports a server that had to be killed or could not be. It is
// safe to call more than once and from several goroutines.
func (p *serverProcess) stop() error {
	p.stopOnce.Do(func() {
		close(p.stopping)
		p.stopErr = p.terminate()
		p.stdout.Close() // ends forwardStdout's copy, if still running
	})
	return p.stopErr
}

func (p *serverProcess) terminate() error {
	select {
	case <-p.exited:
		return nil // it already exited; exitedEarly has told the run
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
		return fmt.Errorf("server (pid %d) did not exit even after SIGKILL", p.pid())
	}
}

// exitDescription says how a process ended, from cmd.Wait's error.
func exitDescription(waitErr error) string {
	if waitErr == nil {
		return "exit status 0"
	}
	return waitErr.Error()
}
