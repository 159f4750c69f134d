package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// On the real hierarchy (root, outside a sandbox: see BUILD.bazel), a
// process held to a tenth of a core that tries to use a whole one is
// throttled in most periods, and its groups go once it has exited.
func TestQuotaThrottlesARealProcess(t *testing.T) {
	h := Detect(Root)
	if os.Geteuid() != 0 || (h.CPU == "" && !h.UnifiedHasCPU) {
		t.Skipf("needs root and a cgroup cpu controller (euid %d, hierarchy %+v)", os.Geteuid(), h)
	}
	g, err := New(h, "throttle-test", Quota{Cores: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	// A busy loop in the very process added (a child forked before the
	// move would stay outside), killed below or with this test.
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		g.Remove()
		t.Fatal(err)
	}
	if err := g.Add(cmd.Process.Pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		g.Remove()
		t.Fatal(err)
	}
	before := g.Read()
	user0, sys0, _ := g.Usage()
	time.Sleep(time.Second)
	after := g.Read()
	user1, sys1, usageOK := g.Usage()
	cmd.Process.Kill()
	cmd.Wait()
	if err := g.Remove(); err != nil {
		t.Errorf("groups not removed: %v", err)
	}
	if !after.HasThrottling {
		t.Fatalf("no throttling counters: %+v", after)
	}
	periods, throttled := after.Periods-before.Periods, after.ThrottledPeriods-before.ThrottledPeriods
	if periods < 5 || throttled*2 < periods {
		t.Errorf("throttled in %d of %d periods; want most", throttled, periods)
	}
	if h.Unified != "" && !after.HasStall {
		t.Errorf("no pressure reading from the v2 group")
	}
	// A tenth of a core for a second, to the microsecond: 100 ms, give or
	// take a period at each end.
	if used := (user1 - user0) + (sys1 - sys0); h.Unified != "" && (!usageOK || used < 70*time.Millisecond || used > 130*time.Millisecond) {
		t.Errorf("the group used %v of CPU in 1 s at a tenth of a core (usage read: %v)", used, usageOK)
	}
	for _, dir := range g.dirs() {
		if _, err := os.Stat(dir); err == nil || !strings.Contains(dir, "grpcbench-throttle-test-") {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

// A process started by Group.Start is in the groups from its first
// instruction: what it reads of its own cgroups is theirs. Without
// CLONE_INTO_CGROUP (a kernel that refuses it) it is still born in the v1
// quota group. The starting thread is back in its own groups afterwards.
func TestStartBornInTheGroups(t *testing.T) {
	h := Detect(Root)
	if os.Geteuid() != 0 || (h.CPU == "" && !h.UnifiedHasCPU) {
		t.Skipf("needs root and a cgroup cpu controller (euid %d, hierarchy %+v)", os.Geteuid(), h)
	}
	for _, cloneInto := range []bool{true, false} {
		g, err := New(h, "start-test", Quota{Cores: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Remove()
		want := g.dirs()
		if !cloneInto {
			want = []string{g.cpuDir}
			if g.v1Root == "" {
				continue // a pure v2 host: nothing is born in a group without the clone
			}
		}
		cgroups, before, after := startCat(t, g, cloneInto)
		for _, dir := range want {
			leaf := "/" + filepath.Base(dir)
			if !strings.Contains(cgroups, ":"+leaf+"\n") {
				t.Errorf("cloneInto %v: the child was not born in %s:\n%s", cloneInto, dir, cgroups)
			}
		}
		if after != before {
			t.Errorf("cloneInto %v: the starting thread's groups changed:\n%s\nto\n%s", cloneInto, before, after)
		}
	}
}

// startCat starts `cat /proc/self/cgroup` with g.Start and returns what it
// printed, and the starting thread's groups before and after.
func startCat(t *testing.T, g *Group, cloneInto bool) (cgroups, before, after string) {
	t.Helper()
	runtime.LockOSThread() // so that the thread read below is the one that started the child
	defer runtime.UnlockOSThread()
	read := func() string {
		b, err := os.ReadFile("/proc/thread-self/cgroup")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before = read()
	cmd := exec.Command("cat", "/proc/self/cgroup")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout = &out
	if err := g.Start(cmd.SysProcAttr, cmd.Start, cloneInto); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return out.String(), before, read()
}
