package serverproc

import (
	"strings"
	"testing"
	"time"
)

// The runtime line after the announcement is read from the server and
// still reaches the log, as does every other line.
func TestServerProcessReadsItsRuntimeLine(t *testing.T) {
	p, _, err := fakeServer(t,
		`echo listening on 127.0.0.1:1; echo other; echo runtime cpus=3 gogc=100 junk; exec sleep 30`,
		5*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.CPUs() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p.CPUs() != 3 || p.Runtime()["gogc"] != "100" {
		t.Errorf("runtime = %v, want cpus=3 gogc=100", p.Runtime())
	}
	if _, ok := p.Runtime()["junk"]; ok {
		t.Errorf("a field without = was kept: %v", p.Runtime())
	}
}

// A server that prints no runtime line has none, and says 0 CPUs.
func TestServerProcessWithoutARuntimeLine(t *testing.T) {
	// The end of a line longer than the buffer is not a line of its own.
	p, _, err := fakeServer(t, `echo listening on 127.0.0.1:1; echo `+strings.Repeat("x", 4096)+`runtime cpus=9; exec sleep 30`,
		5*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if p.Runtime() != nil || p.CPUs() != 0 {
		t.Errorf("runtime = %v, CPUs = %d; want none", p.Runtime(), p.CPUs())
	}
}
