package serverproc

import (
	"context"
	"testing"
	"time"
)

// StartForTest starts a server for a test on loopback, logging its output
// to the test's log, and stops it when the test ends; it fails the test if
// the server does not announce its address within ready. grace is the time
// from SIGTERM to SIGKILL.
func StartForTest(t testing.TB, name string, argv []string, ready, grace time.Duration) *Process {
	t.Helper()
	return StartForTestIn(t, name, nil, argv, ready, grace)
}

// StartForTestIn is StartForTest with the server's environment env (as
// exec.Cmd.Env: nil is this process's).
func StartForTestIn(t testing.TB, name string, env, argv []string, ready, grace time.Duration) *Process {
	t.Helper()
	p, err := Start(context.Background(), Spec{
		Argv:         argv,
		Env:          env,
		ReadyTimeout: ready,
		StopGrace:    grace,
		Log:          TestLog(t, name),
		Check:        CheckLoopback,
	})
	if err != nil {
		t.Fatalf("starting the %s server: %v", name, err)
	}
	t.Cleanup(func() { p.Stop() })
	return p
}
