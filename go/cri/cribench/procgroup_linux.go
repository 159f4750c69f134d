package main

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
// serverProcess), and has the kernel kill it should cri-bench die without
// stopping it, e.g. by SIGKILL.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalServer signals the server's process group, whose id is the
// server's pid, so that anything it spawned gets the signal too.
func signalServer(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // the group is gone already
	}
	return err
}
