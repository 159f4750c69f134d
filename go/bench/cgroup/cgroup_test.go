package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeHybrid is a hybrid layout, as on a host with cgroup v1 controllers
// and the v2 hierarchy mounted for tracking.
func fakeHybrid(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "cpu", "cpu.cfs_quota_us"), "-1\n")
	mustWrite(t, filepath.Join(root, "unified", "cgroup.procs"), "")
	return root
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

func TestDetect(t *testing.T) {
	root := fakeHybrid(t)
	if h := Detect(root); h.CPU != filepath.Join(root, "cpu") || h.Unified != filepath.Join(root, "unified") || h.UnifiedHasCPU {
		t.Errorf("hybrid: %+v", h)
	}
	pure := t.TempDir()
	mustWrite(t, filepath.Join(pure, "cgroup.controllers"), "cpuset cpu io memory pids\n")
	if h := Detect(pure); h.CPU != "" || h.Unified != pure || !h.UnifiedHasCPU {
		t.Errorf("pure v2: %+v", h)
	}
	if h := Detect(t.TempDir()); h != (Hierarchy{}) {
		t.Errorf("no cgroups: %+v", h)
	}
}

// On a hybrid host the quota goes into the v1 cpu controller and the
// tracking into the v2 hierarchy; the process is added to both.
func TestQuotaOnHybrid(t *testing.T) {
	root := fakeHybrid(t)
	g, err := New(Detect(root), "lisp server", Quota{Cores: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(g.cpuDir, "cpu.cfs_quota_us")); got != "5000" {
		t.Errorf("quota %q, want 5000 (µs per 10 ms)", got)
	}
	if got := read(t, filepath.Join(g.cpuDir, "cpu.cfs_period_us")); got != "10000" {
		t.Errorf("period %q", got)
	}
	if !strings.HasPrefix(g.cpuDir, filepath.Join(root, "cpu")+"/grpcbench-lisp_server-") || !strings.HasPrefix(g.track, filepath.Join(root, "unified")+"/") {
		t.Errorf("groups at %s and %s", g.cpuDir, g.track)
	}
	if err := g.Add(1234); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{g.cpuDir, g.track} {
		if got := read(t, filepath.Join(dir, "cgroup.procs")); got != "1234" {
			t.Errorf("%s/cgroup.procs = %q", dir, got)
		}
	}
	mustWrite(t, filepath.Join(g.cpuDir, "cpu.stat"), "nr_periods 40\nnr_throttled 10\nthrottled_time 2500000\n")
	mustWrite(t, filepath.Join(g.track, "cpu.pressure"), "some avg10=1.00 avg60=0 avg300=0 total=700\nfull avg10=0 avg60=0 avg300=0 total=0\n")
	want := Reading{Periods: 40, ThrottledPeriods: 10, Throttled: 2500 * time.Microsecond, HasThrottling: true, Stall: 700 * time.Microsecond, HasStall: true}
	if r := g.Read(); r != want {
		t.Errorf("read %+v, want %+v", r, want)
	}
	if g.Quota() != 0.5 {
		t.Errorf("quota %v", g.Quota())
	}
}

// A quota at the kernel's 100 ms period: the period is written, and the
// quota is the cores' share of it; the smallest quota grows tenfold less.
func TestQuotaAtAPeriodOfItsOwn(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "cgroup.controllers"), "cpu\n")
	mustWrite(t, filepath.Join(root, "cgroup.subtree_control"), "")
	g, err := New(Detect(root), "lisp", Quota{Cores: 0.25, Period: KernelPeriod})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(g.cpuDir, "cpu.max")); got != "25000 100000" {
		t.Errorf("cpu.max %q, want 25000 100000", got)
	}
	hybrid := fakeHybrid(t)
	g, err = New(Detect(hybrid), "go", Quota{Cores: 0.5, Period: KernelPeriod})
	if err != nil {
		t.Fatal(err)
	}
	if q, p := read(t, filepath.Join(g.cpuDir, "cpu.cfs_quota_us")), read(t, filepath.Join(g.cpuDir, "cpu.cfs_period_us")); q != "50000" || p != "100000" {
		t.Errorf("v1 quota %q per %q, want 50000 per 100000", q, p)
	}
	if MinCores(KernelPeriod) != 0.01 || MinCores(0) != 0.1 {
		t.Errorf("MinCores: %g at 100 ms, %g at the default, want 0.01 and 0.1", MinCores(KernelPeriod), MinCores(0))
	}
}

// On a pure v2 host one group takes the quota (cpu.max) and the tracking,
// and the root's children get the cpu controller.
func TestQuotaOnPureV2(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "cgroup.controllers"), "cpu memory\n")
	mustWrite(t, filepath.Join(root, "cgroup.subtree_control"), "memory\n")
	g, err := New(Detect(root), "go", Quota{Cores: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	if g.cpuDir != g.track || len(g.dirs()) != 1 {
		t.Errorf("groups %s and %s, want one", g.cpuDir, g.track)
	}
	if got := read(t, filepath.Join(g.cpuDir, "cpu.max")); got != "15000 10000" {
		t.Errorf("cpu.max %q", got)
	}
	if got := read(t, filepath.Join(root, "cgroup.subtree_control")); got != "+cpu" {
		t.Errorf("subtree_control %q, want +cpu written", got)
	}
	mustWrite(t, filepath.Join(g.cpuDir, "cpu.stat"), "usage_usec 9\nnr_periods 3\nnr_throttled 1\nthrottled_usec 40\n")
	if r := g.Read(); !r.HasThrottling || r.Throttled != 40*time.Microsecond || r.ThrottledPeriods != 1 || r.Periods != 3 {
		t.Errorf("read %+v", r)
	}
}

// Without a quota a group only tracks; without a v2 hierarchy that is an
// error, and a quota without a cpu controller is one too, saying why.
func TestNewFailures(t *testing.T) {
	if _, err := New(Detect(t.TempDir()), "x", Quota{Cores: 0}); err == nil {
		t.Error("a tracking group without a v2 hierarchy")
	}
	if _, err := New(Detect(t.TempDir()), "x", Quota{Cores: 0.5}); err == nil || !strings.Contains(err.Error(), "needs root") {
		t.Errorf("a quota without a cpu controller: %v", err)
	}
	if _, err := New(Detect(fakeHybrid(t)), "x", Quota{Cores: -1}); err == nil {
		t.Error("a negative quota accepted")
	}
	if _, err := New(Detect(fakeHybrid(t)), "x", Quota{Cores: 0.05}); err == nil {
		t.Error("a quota below the kernel's 1 ms accepted")
	}
	for _, period := range []time.Duration{time.Microsecond * 999, 2 * time.Second, -time.Millisecond} {
		if _, err := New(Detect(fakeHybrid(t)), "x", Quota{Cores: 0.5, Period: period}); err == nil {
			t.Errorf("a CFS period of %v accepted", period)
		}
	}
	root := fakeHybrid(t)
	g, err := New(Detect(root), "x", Quota{Cores: 0})
	if err != nil || g.cpuDir != "" || g.track == "" {
		t.Fatalf("tracking only: %+v, %v", g, err)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.track); !os.IsNotExist(err) {
		t.Errorf("%s still there after Remove: %v", g.track, err)
	}
}

// New removes the groups a dead process left behind, and only those.
func TestNewSweepsGroupsOfDeadMakers(t *testing.T) {
	root := fakeHybrid(t)
	h := Detect(root)
	dead := filepath.Join(h.Unified, "grpcbench-go-999999999-1")
	live := filepath.Join(h.Unified, fmt.Sprintf("grpcbench-go-%d-7", os.Getpid()))
	other := filepath.Join(h.CPU, "system.slice")
	for _, dir := range []string{dead, live, other} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := New(h, "x", Quota{Cores: 0.5}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead maker's group is still there: %v", err)
	}
	for _, dir := range []string{live, other} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s was swept: %v", dir, err)
		}
	}
	if pid, ok := makerPID("grpcbench-lisp-server-42-3"); !ok || pid != 42 {
		t.Errorf("makerPID: %d %v", pid, ok)
	}
}

func TestParseCPUStat(t *testing.T) {
	if _, _, _, ok := ParseCPUStat("nr_periods 1\nnr_throttled 0\n"); ok {
		t.Error("parsed without a throttled time")
	}
	if p, n, d, ok := ParseCPUStat("nr_periods 7\nnr_throttled 2\nthrottled_time 1000\n"); !ok || p != 7 || n != 2 || d != time.Microsecond {
		t.Errorf("got %d %d %v %v", p, n, d, ok)
	}
	for _, bad := range []string{"nr_periods -1\nnr_throttled 0\nthrottled_usec 0\n", "nr_periods 1\nnr_throttled 0\nthrottled_time -1\n", "nr_periods 1\nnr_throttled 0\nthrottled_usec 9223372036854775807\n"} {
		if _, _, d, ok := ParseCPUStat(bad); ok || d != 0 {
			t.Errorf("%q parsed as %v, %v", bad, d, ok)
		}
	}
}

func TestUsage(t *testing.T) {
	root := fakeHybrid(t)
	g, err := New(Detect(root), "x", Quota{Cores: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := g.Usage(); ok {
		t.Error("a usage before the kernel wrote one")
	}
	mustWrite(t, filepath.Join(g.track, "cpu.stat"), "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnice_usec 0\n")
	if u, s, ok := g.Usage(); !ok || u != time.Millisecond || s != 500*time.Microsecond {
		t.Errorf("usage %v %v %v", u, s, ok)
	}
	if _, _, ok := ParseUsage("usage_usec 3\nuser_usec 1\n"); ok {
		t.Error("parsed without system_usec")
	}
	if u, s, ok := ParseUsage("user_usec -1\nsystem_usec 9223372036854775807\n"); ok || u < 0 || s < 0 {
		t.Errorf("a negative and an overflowing counter parsed as %v, %v, %v", u, s, ok)
	}
}

func TestParseStall(t *testing.T) {
	psi := "some avg10=93.20 avg60=95.02 avg300=96.40 total=3457443044\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	if d, ok := ParseStall(psi); !ok || d != 3457443044*time.Microsecond {
		t.Errorf("got %v, %v", d, ok)
	}
	for _, bad := range []string{"", "full avg10=0 total=5\n", "some avg10=1 total=x\n", "some total=-1\n", "some total=9223372036854775807\n"} {
		if _, ok := ParseStall(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestV1Path(t *testing.T) {
	listing := []byte("9:name=systemd:/\n4:memory:/a/b\n2:cpu,cpuacct:/bench/x\n0::/u\n")
	for mount, want := range map[string]string{"cpu,cpuacct": "/bench/x", "cpu": "/bench/x", "memory": "/a/b"} {
		if got, ok := v1Path(listing, mount); !ok || got != want {
			t.Errorf("%s: %q, %v; want %q", mount, got, ok, want)
		}
	}
	if _, ok := v1Path(listing, "blkio"); ok {
		t.Error("found a hierarchy that is not listed")
	}
}

// A container's v1 hierarchy is mounted from its own group: the group the
// kernel names for a thread is then found below the mount, not below a
// directory of that name.
func TestMountRootOf(t *testing.T) {
	info := []byte("29 23 0:26 / /sys/fs/cgroup ro - tmpfs tmpfs ro\n" +
		"32 29 0:29 /docker/abc /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n")
	if root, ok := mountRootOf(info, "/sys/fs/cgroup/cpu"); !ok || root != "/docker/abc" {
		t.Errorf("root %q, %v; want /docker/abc", root, ok)
	}
	if _, ok := mountRootOf(info, "/sys/fs/cgroup/memory"); ok {
		t.Error("found a mount that is not listed")
	}
}
