//go:build !linux

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

// serverProcAttr has nothing to add where process groups and the parent
// death signal are not available (the benchmarks run on Linux).
func serverProcAttr() *syscall.SysProcAttr { return nil }

// signalServer signals only the server process itself.
func signalServer(p *os.Process, sig syscall.Signal) error {
	var err error
	if sig == sigKill {
		err = p.Kill()
	} else {
		err = p.Signal(sig)
	}
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}
