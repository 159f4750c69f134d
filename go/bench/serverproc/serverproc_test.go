package serverproc

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/cgroup"
)

// The server process tests run small sh scripts in place of a server. Each
// script writes the pids to check into the file named by its $1.

// testContext is cancelled when the test ends.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// fakeServer starts script under Start; the caller checks the error.
func fakeServer(t *testing.T, script string, readyTimeout, stopGrace time.Duration) (*Process, string, error) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process groups and /proc are Linux features")
	}
	pidFile := filepath.Join(t.TempDir(), "pids")
	p, err := Start(testContext(t), Spec{
		Argv:         []string{"/bin/sh", "-c", script, "sh", pidFile},
		ReadyTimeout: readyTimeout,
		StopGrace:    stopGrace,
		Log:          &syncBuffer{},
		Check:        CheckLoopback,
	})
	if p != nil {
		t.Cleanup(func() { p.Stop() })
	}
	return p, pidFile, err
}

func TestServerProcessReadsTheAnnouncementAndStopsTheGroup(t *testing.T) {
	// The sleep is a child of the shell, so only signalling the process
	// group stops it.
	p, pidFile, err := fakeServer(t,
		`sleep 30 & echo $$ $! > "$1"; echo listening on 127.0.0.1:1; wait`,
		5*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.Addr() != "127.0.0.1:1" {
		t.Errorf("addr = %q, want 127.0.0.1:1", p.Addr())
	}
	pids := readPids(t, pidFile)
	if p.ExitedEarly() != nil {
		t.Errorf("ExitedEarly() = %v while running", p.ExitedEarly())
	}
	start := time.Now()
	if err := p.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("stop took %v, although the script exits on SIGTERM", d)
	}
	expectGone(t, pids)
	if err := p.Stop(); err != nil {
		t.Errorf("second stop: %v", err)
	}
	if p.ExitedEarly() != nil {
		t.Errorf("ExitedEarly() = %v after stop", p.ExitedEarly())
	}
}

func TestServerProcessIsKilledWhenItIgnoresSIGTERM(t *testing.T) {
	// An ignored signal stays ignored across exec, so the sleep ignores
	// SIGTERM too.
	p, pidFile, err := fakeServer(t,
		`trap "" TERM; sleep 30 & echo $$ $! > "$1"; echo listening on 127.0.0.1:1; wait`,
		5*time.Second, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	pids := readPids(t, pidFile)
	start := time.Now()
	err = p.Stop()
	if err == nil || !strings.Contains(err.Error(), "killed it") {
		t.Errorf("stop: %v, want a report that the server had to be killed", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("stop took %v, want the 300ms grace and not much more", d)
	}
	expectGone(t, pids)
}

func TestServerProcessReadinessTimeout(t *testing.T) {
	start := time.Now()
	p, pidFile, err := fakeServer(t, `echo $$ > "$1"; exec sleep 30`, 300*time.Millisecond, 5*time.Second)
	if p != nil || err == nil || !strings.Contains(err.Error(), "within 300ms") {
		t.Fatalf("Start = %v, %v; want a readiness timeout", p, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Start took %v with a 300ms readiness timeout", d)
	}
	expectGone(t, readPids(t, pidFile))
}

func TestServerProcessRejectsAWrongAnnouncement(t *testing.T) {
	for script, want := range map[string]string{
		`echo $$ > "$1"; echo hello; exec sleep 30`:                     `first stdout line is "hello"`,
		`echo $$ > "$1"; echo listening on 192.0.2.1:80; exec sleep 30`: "loopback",
		`echo $$ > "$1"; printf 'listening on 127.0.0.1:1'`:             "before a complete first line",
	} {
		p, pidFile, err := fakeServer(t, script, 5*time.Second, 5*time.Second)
		if p != nil || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Start = %v, %v; want an error containing %q", script, p, err, want)
			continue
		}
		expectGone(t, readPids(t, pidFile))
	}
}

func TestServerProcessThatExitsBeforeAnnouncing(t *testing.T) {
	_, _, err := fakeServer(t, `echo oops >&2; exit 3`, 5*time.Second, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Start: %v, want an error with the exit status", err)
	}
}

func TestServerProcessCrashIsNoticed(t *testing.T) {
	p, _, err := fakeServer(t, `echo listening on 127.0.0.1:1; sleep 0.2; exit 1`, 5*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.ExitedEarly() == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.ExitedEarly(); err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("ExitedEarly() = %v, want the crash", err)
	}
}

func TestServerProcessStartFailure(t *testing.T) {
	_, err := Start(context.Background(), Spec{
		Argv: []string{filepath.Join(t.TempDir(), "missing")}, ReadyTimeout: time.Second, StopGrace: time.Second,
		Log: &syncBuffer{},
	})
	if err == nil {
		t.Error("starting a missing executable succeeded")
	}
}

func TestParseListenLine(t *testing.T) {
	for line, want := range map[string]string{
		"listening on 127.0.0.1:10000\n":  "127.0.0.1:10000",
		"listening on 127.0.0.1:1\r\n":    "127.0.0.1:1",
		"listening on [::1]:443\n":        "[::1]:443",
		"listening on 127.1.2.3:65535\n":  "127.1.2.3:65535",
		"Listening on 127.0.0.1:1\n":      "",
		"listening on 127.0.0.1\n":        "",
		"listening on 127.0.0.1:0\n":      "",
		"listening on 0.0.0.0:10000\n":    "",
		"listening on localhost:10000\n":  "",
		"listening on 127.0.0.1:1 now\n":  "",
		"listening  on 127.0.0.1:10000\n": "",
	} {
		got, err := ParseAnnouncement(line, CheckLoopback)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ParseAnnouncement(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
}

// readPids reads the pids a fake server wrote, waiting briefly for them.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && bytes.HasSuffix(data, []byte("\n")) {
			var pids []int
			for _, f := range strings.Fields(string(data)) {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("pid file %q: %v", data, err)
				}
				pids = append(pids, pid)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pids in %s: %v", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// expectGone fails unless every pid has exited within a few seconds. A
// zombie counts as gone: it has exited and only awaits its parent.
func expectGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for running(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d is still running", pid)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func running(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(data, ')')
	state := bytes.Fields(data[i+1:])[0]
	return state[0] != 'Z' && state[0] != 'X'
}

// syncBuffer is a bytes.Buffer that the server's output copiers and the
// test may use concurrently.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRSSAndThreadsOfThisProcess(t *testing.T) {
	rss, err := statusField(os.Getpid(), "VmRSS")
	if err != nil || rss <= 0 {
		t.Fatalf("VmRSS of this process: %d, %v", rss, err)
	}
	n, err := statusField(os.Getpid(), "Threads")
	if err != nil || n < 1 {
		t.Fatalf("Threads of this process: %d, %v", n, err)
	}
	if _, err := statusField(os.Getpid(), "NoSuchField"); err == nil {
		t.Error("a missing field gave no error")
	}
}

// A server with a CPU quota is born in its groups: the first thing it
// reads of its own cgroups is the quota group, so a runtime that sizes
// itself to the quota at start (Go's GOMAXPROCS) sees it.
func TestServerProcessIsBornInItsGroups(t *testing.T) {
	if g, err := cgroup.New(cgroup.Detect(cgroup.Root), "born-probe", cgroup.Quota{Cores: 0.5}); err != nil {
		t.Skipf("no CPU quota on this host: %v", err)
	} else {
		g.Remove()
	}
	out := filepath.Join(t.TempDir(), "cgroup")
	p, err := Start(testContext(t), Spec{
		Argv:         []string{"/bin/sh", "-c", `cat /proc/self/cgroup > "$1"; echo listening on 127.0.0.1:1; exec sleep 30`, "sh", out},
		ReadyTimeout: 5 * time.Second,
		StopGrace:    time.Second,
		Log:          &syncBuffer{},
		Check:        CheckLoopback,
		CPUQuota:     0.5,
		CgroupName:   "born-test",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "born-test") {
		t.Errorf("the server's first look at its cgroups is outside its groups:\n%s", data)
	}
}
