package serverproc

import (
	"errors"
	"os"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// serverProcAttr puts the server in a process group of its own (see
// Process), and has the kernel kill it should the benchmark die
// without stopping it, e.g. killed with SIGKILL itself.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalServer signals the server's whole process group, which Setpgid made
// the server's own (its id is the server's pid), so that anything the server
// spawned gets the signal too.
func signalServer(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // the group is gone already
	}
	return err
}
