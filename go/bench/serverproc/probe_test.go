package serverproc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A server that announces nothing is ready when the probe says so: here,
// when the script has created a file.
func TestStartProbedWaitsForTheProbe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process groups are a Linux feature")
	}
	flag := filepath.Join(t.TempDir(), "ready")
	probes := 0
	p, err := StartProbed(testContext(t), Spec{
		Argv:         []string{"/bin/sh", "-c", `sleep 0.3; touch "$1"; exec sleep 60`, "sh", flag},
		ReadyTimeout: 30 * time.Second, StopGrace: 5 * time.Second, Log: &syncBuffer{}, Check: CheckLoopback,
	}, "127.0.0.1:1", 50*time.Millisecond, func(ctx context.Context) error {
		probes++
		_, err := os.Stat(flag)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if probes < 2 {
		t.Errorf("ready after %d probes, want the probe to have failed first", probes)
	}
	if p.Addr() != "127.0.0.1:1" {
		t.Errorf("Addr() = %q", p.Addr())
	}
	if err := p.ExitedEarly(); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestStartProbedReportsAnExitBeforeReady(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process groups are a Linux feature")
	}
	_, err := StartProbed(testContext(t), Spec{
		Argv:         []string{"/bin/sh", "-c", "exit 3"},
		ReadyTimeout: 30 * time.Second, StopGrace: time.Second, Log: &syncBuffer{},
	}, "127.0.0.1:1", 20*time.Millisecond, func(context.Context) error { return errors.New("not yet") })
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "not yet") {
		t.Fatalf("err = %v, want the exit status and the last probe error", err)
	}
}

func TestStartProbedRefusesANonLoopbackAddress(t *testing.T) {
	_, err := StartProbed(testContext(t), Spec{Argv: []string{"/bin/true"}, Check: CheckLoopback},
		"192.0.2.1:443", time.Second, func(context.Context) error { return nil })
	if err == nil {
		t.Fatal("started a server on a non-loopback address")
	}
}
