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

	"github.com/grpcbench/grpcbench/go/cri/mockcri"
)

// How long the mock server may take to announce itself (it generates its
// inventory first: well under a second even for 100k containers), and how
// long it has from SIGTERM to exit before SIGKILL. The grace exceeds the
// server's own graceful-shutdown timeout (5s), so a healthy server always
// exits on its own.
const (
	serverReadyTimeout = 30 * time.Second
	serverStopGrace    = 10 * time.Second
)

// serverProcess is a started mock server. It runs in a process group of its
// own, so a Ctrl-C at the terminal reaches only cri-bench, which then stops
// the server in order, and with Pdeathsig, so it dies if cri-bench does.
type serverProcess struct {
	cmd      *exec.Cmd
	endpoint mockcri.Endpoint // as announced
	grace    time.Duration
	stdout   *os.File // read end of the server's stdout

	exited  chan struct{} // closed once the process has been waited for
	waitErr error         // its exit status, once exited is closed

	stopOnce sync.Once
	stopErr  error
}

// startServer runs argv and waits for its first stdout line, "listening on
// ENDPOINT". The server's stderr, and its stdout after that line, go to
// log. On any failure the process is stopped before the error returns.
func startServer(ctx context.Context, argv []string, log io.Writer) (*serverProcess, error) {
	// An explicit pipe rather than cmd.StdoutPipe: Wait closes the latter
	// as soon as the process exits, which could drop a line not yet read.
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = stdoutW
	cmd.Stderr = log
	cmd.SysProcAttr = serverProcAttr()
	cmd.WaitDelay = time.Second // a leftover holder of stderr must not hide the exit
	err = cmd.Start()
	stdoutW.Close() // the child has its copy; EOF comes when it is done
	if err != nil {
		stdoutR.Close()
		return nil, err
	}
	p := &serverProcess{cmd: cmd, grace: serverStopGrace, stdout: stdoutR, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()

	first := make(chan string, 1)
	go func() {
		br := bufio.NewReaderSize(stdoutR, 4096)
		line, err := br.ReadSlice('\n')
		if err != nil {
			line = nil // EOF or an over-long line: no announcement
		}
		first <- string(line)
		if err == nil {
			io.Copy(log, br) // until EOF, or stop closes the pipe
		}
	}()

	ep, err := p.awaitAnnouncement(ctx, first)
	if err != nil {
		p.stop()
		return nil, err
	}
	p.endpoint = ep
	return p, nil
}

func (p *serverProcess) awaitAnnouncement(ctx context.Context, first <-chan string) (mockcri.Endpoint, error) {
	timer := time.NewTimer(serverReadyTimeout)
	defer timer.Stop()
	select {
	case line := <-first:
		if line == "" {
			select {
			case <-p.exited:
				return mockcri.Endpoint{}, fmt.Errorf("server exited (%v) before announcing its endpoint", exitDescription(p.waitErr))
			case <-time.After(time.Second):
				return mockcri.Endpoint{}, errors.New("server closed stdout without announcing its endpoint")
			}
		}
		rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "listening on ")
		if !ok {
			return mockcri.Endpoint{}, fmt.Errorf("server's first stdout line is %q, want \"listening on ENDPOINT\"", line)
		}
		return mockcri.ParseEndpoint(rest)
	case <-timer.C:
		return mockcri.Endpoint{}, fmt.Errorf("server announced no endpoint within %v", serverReadyTimeout)
	case <-ctx.Done():
		return mockcri.Endpoint{}, fmt.Errorf("waiting for the server: %w", ctx.Err())
	}
}

// pid is the server's process id, for harness.NewProcessCPU.
func (p *serverProcess) pid() int { return p.cmd.Process.Pid }

// exitedEarly reports a server that has exited although stop was not
// called: a crash, which fails the scenario it happened in.
func (p *serverProcess) exitedEarly() error {
	select {
	case <-p.exited:
		return fmt.Errorf("server exited unexpectedly (%v)", exitDescription(p.waitErr))
	default:
		return nil
	}
}

// stop ends the server: SIGTERM to its process group, then SIGKILL if it
// has not exited after the grace period. It returns once the process is
// reaped, reports a server that had to be killed, and is safe to call more
// than once.
func (p *serverProcess) stop() error {
	p.stopOnce.Do(func() {
		p.stopErr = p.terminate()
		p.stdout.Close()
	})
	return p.stopErr
}

func (p *serverProcess) terminate() error {
	select {
	case <-p.exited:
		return nil
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
