// Package cgroup puts a benchmark's server into control groups of its own:
// one that caps its CPU time (a CFS quota, in cores), so that a load
// generator on a whole core has headroom over a server that has less; and
// one that tracks it, so that the pressure a repetition reads is the
// server's own (its threads waiting for a CPU) rather than the host's.
//
// Both cgroup layouts are handled. On a hybrid host (cgroup v1 controllers,
// and the v2 hierarchy mounted at /sys/fs/cgroup/unified for tracking) the
// quota is the v1 cpu controller's cpu.cfs_quota_us and the pressure comes
// from the v2 group. On a pure v2 host one group does both (cpu.max and
// cpu.pressure). Groups are made under the hierarchy's root, which takes
// root; without it New fails and says why.
package cgroup

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultPeriod is the CFS period a quota is set against unless it names
// another: the quota is the CPU time the group may use in each period, and
// once it is spent the group waits for the next. A tenth of the kernel's
// default, so that a server at a quarter of a core is held back for at
// most 10 ms at a time (7.5 ms with one busy thread), not 100, and a 1 s
// repetition spans a hundred periods.
const DefaultPeriod = 10 * time.Millisecond

// KernelPeriod is the kernel's own default CFS period, the one container
// runtimes use.
const KernelPeriod = 100 * time.Millisecond

// The periods the kernel accepts (cpu.max, cpu.cfs_period_us).
const (
	MinPeriod = time.Millisecond
	MaxPeriod = time.Second
)

// Quota is a CPU cap: Cores of CPU time in each Period (0: DefaultPeriod).
type Quota struct {
	Cores  float64
	Period time.Duration
}

// period is q's period, DefaultPeriod when it names none.
func (q Quota) period() time.Duration {
	if q.Period == 0 {
		return DefaultPeriod
	}
	return q.Period
}

// MinCores is the smallest quota in cores at period (0: DefaultPeriod): the
// kernel accepts no less than 1 ms per period.
func MinCores(period time.Duration) float64 {
	return float64(time.Millisecond) / float64(Quota{Period: period}.period())
}

// Hierarchy is where the cgroup file systems are mounted.
type Hierarchy struct {
	// CPU is the directory of the v1 cpu controller ("" on a pure v2 host).
	CPU string
	// Unified is the v2 hierarchy's root ("" without one).
	Unified string
	// UnifiedHasCPU says the v2 hierarchy owns the cpu controller (pure v2).
	UnifiedHasCPU bool
}

// Root is the cgroup file system's usual mount point.
const Root = "/sys/fs/cgroup"

// Detect finds the hierarchies under root (Root, or a test's directory).
func Detect(root string) Hierarchy {
	var h Hierarchy
	if controllers, err := os.ReadFile(filepath.Join(root, "cgroup.controllers")); err == nil {
		h.Unified = root
		h.UnifiedHasCPU = hasWord(string(controllers), "cpu")
		return h
	}
	for _, dir := range []string{"cpu", "cpu,cpuacct"} {
		if exists(filepath.Join(root, dir, "cpu.cfs_quota_us")) {
			h.CPU = filepath.Join(root, dir)
			break
		}
	}
	if exists(filepath.Join(root, "unified", "cgroup.procs")) {
		h.Unified = filepath.Join(root, "unified")
	}
	return h
}

// Group is one server's control groups (a directory in each hierarchy
// used). Remove deletes them once the server has exited.
type Group struct {
	quota  float64 // cores; 0 for none
	cpuDir string  // the group holding the quota ("" without one)
	track  string  // the v2 group whose cpu.pressure is read ("" without one)
	// v1Root is the v1 cpu hierarchy's root when cpuDir is in it (a hybrid
	// host), where a thread is moved back after starting a server.
	v1Root string
}

var serial atomic.Int64

// New makes the groups for a server named name under h: a quota q (0
// cores: no cap; the group then only tracks), and a v2 group for pressure
// where the host has the v2 hierarchy. A quota that cannot be set is an
// error; a host without a v2 hierarchy only loses the pressure reading.
func New(h Hierarchy, name string, q Quota) (*Group, error) {
	cores := q.Cores
	if cores < 0 {
		return nil, fmt.Errorf("CPU quota %v: want 0 (none) or a positive number of cores", cores)
	}
	if p := q.period(); p < MinPeriod || p > MaxPeriod {
		return nil, fmt.Errorf("CFS period %v: the kernel accepts %v to %v", p, MinPeriod, MaxPeriod)
	}
	sweep(h)
	leaf := fmt.Sprintf("%s%s-%d-%d", leafPrefix, sanitize(name), os.Getpid(), serial.Add(1))
	g := &Group{quota: cores}
	if h.Unified != "" {
		dir := filepath.Join(h.Unified, leaf)
		if err := os.Mkdir(dir, 0o755); err != nil {
			if cores == 0 {
				return nil, fmt.Errorf("tracking cgroup: %w", err)
			}
		} else {
			g.track = dir
		}
	}
	if cores == 0 {
		if g.track == "" {
			return nil, errors.New("no cgroup v2 hierarchy to track the server's pressure in")
		}
		return g, nil
	}
	if err := g.setQuota(h, leaf, cores, q.period()); err != nil {
		g.Remove()
		return nil, fmt.Errorf("CPU quota of %v cores (this needs root and a cgroup cpu controller): %w", cores, err)
	}
	return g, nil
}

// setQuota makes the group that caps the server at cores per period.
func (g *Group) setQuota(h Hierarchy, leaf string, cores float64, period time.Duration) error {
	quota := time.Duration(cores * float64(period))
	if quota < time.Millisecond {
		return fmt.Errorf("the kernel accepts no quota below 1 ms per %v period, %g cores", period, MinCores(period))
	}
	switch {
	case h.UnifiedHasCPU && g.track != "":
		if err := enableCPUController(h.Unified); err != nil {
			return err
		}
		g.cpuDir = g.track
		return write(filepath.Join(g.cpuDir, "cpu.max"), fmt.Sprintf("%d %d", quota.Microseconds(), period.Microseconds()))
	case h.CPU != "":
		dir := filepath.Join(h.CPU, leaf)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		g.cpuDir, g.v1Root = dir, h.CPU
		if err := write(filepath.Join(dir, "cpu.cfs_period_us"), strconv.FormatInt(period.Microseconds(), 10)); err != nil {
			return err
		}
		return write(filepath.Join(dir, "cpu.cfs_quota_us"), strconv.FormatInt(quota.Microseconds(), 10))
	}
	return errors.New("the host has no cgroup cpu controller")
}

// enableCPUController lets the v2 root's children use the cpu controller.
func enableCPUController(root string) error {
	control := filepath.Join(root, "cgroup.subtree_control")
	enabled, err := os.ReadFile(control)
	if err == nil && hasWord(string(enabled), "cpu") {
		return nil
	}
	return write(control, "+cpu")
}

// Quota is the cap in cores, 0 for none.
func (g *Group) Quota() float64 { return g.quota }

// Add moves process pid (all its threads; those it starts later follow)
// into the groups.
func (g *Group) Add(pid int) error {
	for _, dir := range g.dirs() {
		if err := write(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes the groups. The kernel refuses while a process is still
// in one, so it is for after the server has been reaped.
func (g *Group) Remove() error {
	var errs []error
	for _, dir := range g.dirs() {
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (g *Group) dirs() []string {
	var dirs []string
	for _, d := range []string{g.cpuDir, g.track} {
		if d != "" && (len(dirs) == 0 || dirs[0] != d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Reading is a snapshot of a group's cumulative counters. Quota and
// pressure figures are each valid only where their Has flag is set.
type Reading struct {
	Periods, ThrottledPeriods int64         // CFS periods run, and those the quota cut short
	Throttled                 time.Duration // time the group's threads were held back by the quota
	HasThrottling             bool
	Stall                     time.Duration // total time some thread of the group waited for a CPU (PSI "some")
	HasStall                  bool
}

// Read takes a snapshot of the group's counters.
func (g *Group) Read() Reading {
	var r Reading
	if g.cpuDir != "" {
		if data, err := os.ReadFile(filepath.Join(g.cpuDir, "cpu.stat")); err == nil {
			r.Periods, r.ThrottledPeriods, r.Throttled, r.HasThrottling = ParseCPUStat(string(data))
		}
	}
	if g.track != "" {
		if data, err := os.ReadFile(filepath.Join(g.track, "cpu.pressure")); err == nil {
			r.Stall, r.HasStall = ParseStall(string(data))
		}
	}
	return r
}

// Usage is the CPU time the group's processes have used, in user and
// kernel mode, to the microsecond (the v2 group's cpu.stat, which the
// kernel keeps with or without the cpu controller); ok false without a v2
// group. /proc/PID/stat counts in clock ticks of 10 ms, which a 1 s
// repetition on a quarter of a core, 25 ticks, cannot resolve.
func (g *Group) Usage() (user, system time.Duration, ok bool) {
	if g.track == "" {
		return 0, 0, false
	}
	data, err := os.ReadFile(filepath.Join(g.track, "cpu.stat"))
	if err != nil {
		return 0, 0, false
	}
	return ParseUsage(string(data))
}

// ParseUsage reads user_usec and system_usec from a v2 cpu.stat file.
func ParseUsage(data string) (user, system time.Duration, ok bool) {
	stat := statFields(data)
	user, okU := stat.microseconds("user_usec")
	system, okS := stat.microseconds("system_usec")
	return user, system, okU && okS
}

// ParseCPUStat reads nr_periods, nr_throttled and the throttled time from a
// cpu.stat file of either version (v1 throttled_time in ns, v2
// throttled_usec).
func ParseCPUStat(data string) (periods, throttledPeriods int64, throttled time.Duration, ok bool) {
	stat := statFields(data)
	periods, okP := stat["nr_periods"]
	throttledPeriods, okT := stat["nr_throttled"]
	ok = okP && okT && periods >= 0 && throttledPeriods >= 0
	if ns, okNs := stat["throttled_time"]; okNs {
		if ns < 0 {
			return periods, throttledPeriods, 0, false
		}
		return periods, throttledPeriods, time.Duration(ns), ok
	}
	throttled, okUs := stat.microseconds("throttled_usec")
	return periods, throttledPeriods, throttled, ok && okUs
}

// microseconds is the duration of key's value in µs, if it has one.
func (s stats) microseconds(key string) (time.Duration, bool) {
	us, ok := s[key]
	if !ok {
		return 0, false
	}
	return microseconds(us)
}

// microseconds is us µs, if that is a duration: the kernel's counters are
// never negative, and a value that overflows a Duration is no measurement.
func microseconds(us int64) (time.Duration, bool) {
	if us < 0 || us > math.MaxInt64/int64(time.Microsecond) {
		return 0, false
	}
	return time.Duration(us) * time.Microsecond, true
}

// stats are the "KEY VALUE" lines of a cgroup stat file with an integer
// value.
type stats map[string]int64

func statFields(data string) stats {
	out := map[string]int64{}
	for line := range strings.SplitSeq(data, "\n") {
		key, value, found := strings.Cut(strings.TrimSpace(line), " ")
		if !found {
			continue
		}
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			out[key] = n
		}
	}
	return out
}

// ParseStall reads the "some" total (µs) of a PSI file such as cpu.pressure.
func ParseStall(data string) (time.Duration, bool) {
	for line := range strings.SplitSeq(data, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "some" {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				us, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, false
				}
				return microseconds(us)
			}
		}
	}
	return 0, false
}

// leafPrefix starts the name of every group New makes, which ends in the
// making process's pid and a serial: "grpcbench-NAME-PID-N".
const leafPrefix = "grpcbench-"

// sweep removes the groups that processes now dead left behind (a load
// generator killed with SIGKILL never reaps its server, whose groups the
// reaper would have removed). The kernel refuses to remove a group that
// still holds a process, so a live server's stays.
func sweep(h Hierarchy) {
	for _, root := range []string{h.CPU, h.Unified} {
		if root == "" {
			continue
		}
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if pid, ok := makerPID(e.Name()); e.IsDir() && ok && !exists(fmt.Sprintf("/proc/%d", pid)) {
				os.Remove(filepath.Join(root, e.Name()))
			}
		}
	}
}

// makerPID is the pid in a group name New made.
func makerPID(name string) (int, bool) {
	if !strings.HasPrefix(name, leafPrefix) {
		return 0, false
	}
	fields := strings.Split(name, "-")
	if len(fields) < 4 {
		return 0, false
	}
	pid, err := strconv.Atoi(fields[len(fields)-2])
	return pid, err == nil && pid > 0
}

func write(path, value string) error {
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, path, err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func hasWord(s, word string) bool {
	for _, w := range strings.Fields(s) {
		if w == word {
			return true
		}
	}
	return false
}

// sanitize keeps a group name to characters a directory name may hold.
func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
}
