package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Start runs start, which starts a child process with attr, so that the
// child is born in g's groups: its runtime then sizes itself to the quota
// from its first instruction (Go's runtime reads its cgroup's CPU limit
// once, at start, to set GOMAXPROCS), and none of its work runs outside
// them. Into the v2 group the kernel clones it directly (CLONE_INTO_CGROUP,
// attr's CgroupFD), unless cloneInto is false. A v1 group takes no such
// flag, but a child is born in its parent thread's v1 groups: Start moves
// the calling thread into the quota group around start, and back.
//
// Where the kernel refuses clone3 (old kernels, some seccomp profiles),
// start fails with an error that CloneRefused recognises; Start with
// cloneInto false and AddToTracking after it then do what they can.
func (g *Group) Start(attr *syscall.SysProcAttr, start func() error, cloneInto bool) error {
	if g.track != "" && cloneInto {
		if attr == nil {
			return errors.New("cgroup: no SysProcAttr to clone the child into its group with")
		}
		// O_PATH: a descriptor that only names the directory, all
		// CLONE_INTO_CGROUP needs.
		fd, err := unix.Open(g.track, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening the cgroup %s: %w", g.track, err)
		}
		defer unix.Close(fd)
		attr.UseCgroupFD, attr.CgroupFD = true, fd
	}
	if g.v1Root == "" {
		return start()
	}
	return g.startFromQuotaGroup(start)
}

// startFromQuotaGroup runs start on a thread moved into the v1 quota group
// for the while, so that the child it forks is born there.
func (g *Group) startFromQuotaGroup(start func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own, err := threadV1Group(g.v1Root)
	if err != nil {
		return err
	}
	tid := strconv.Itoa(syscall.Gettid())
	if err := write(filepath.Join(g.cpuDir, "tasks"), tid); err != nil {
		return fmt.Errorf("moving the starting thread into %s: %w", g.cpuDir, err)
	}
	startErr := start()
	if err := write(filepath.Join(own, "tasks"), tid); err != nil {
		// Anywhere but under the server's quota: the hierarchy's root
		// takes any thread of root's.
		if rootErr := write(filepath.Join(g.v1Root, "tasks"), tid); rootErr != nil {
			// The thread must not run anything else: it stays locked to
			// this goroutine, which the caller was warned about.
			runtime.LockOSThread()
			return errors.Join(startErr, fmt.Errorf("the starting thread is stuck in %s: %w", g.cpuDir, rootErr))
		}
		return errors.Join(startErr, fmt.Errorf("moving the starting thread back to %s (it went to the hierarchy's root): %w", own, err))
	}
	return startErr
}

// CloneRefused reports whether err, from starting a child with
// CLONE_INTO_CGROUP, says the kernel will not clone into a cgroup at all.
func CloneRefused(err error) bool {
	return errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EPERM)
}

// AddToTracking moves process pid into the v2 group, for a child started
// without CLONE_INTO_CGROUP.
func (g *Group) AddToTracking(pid int) error {
	if g.track == "" {
		return nil
	}
	return write(filepath.Join(g.track, "cgroup.procs"), strconv.Itoa(pid))
}

// threadV1Group is the directory of the calling thread's group in the v1
// hierarchy mounted at root. The kernel names the group relative to the
// hierarchy's root, which need not be what is mounted at root (in a
// container, the container's own group is): /proc/self/mountinfo says
// what is.
func threadV1Group(root string) (string, error) {
	data, err := os.ReadFile("/proc/thread-self/cgroup")
	if err != nil {
		return "", err
	}
	mount, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	path, ok := v1Path(data, filepath.Base(mount))
	if !ok {
		return "", fmt.Errorf("no %s hierarchy in /proc/thread-self/cgroup", filepath.Base(mount))
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	mountRoot, ok := mountRootOf(info, mount)
	if !ok {
		return "", fmt.Errorf("%s is not a mount point in /proc/self/mountinfo", mount)
	}
	rel, err := filepath.Rel(mountRoot, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("the thread's group %s is outside what is mounted at %s (%s)", path, mount, mountRoot)
	}
	dir := filepath.Join(mount, rel)
	if !exists(filepath.Join(dir, "tasks")) {
		return "", fmt.Errorf("the thread's group %s has no tasks file", dir)
	}
	return dir, nil
}

// mountRootOf finds, in a /proc/*/mountinfo listing, the root within its
// file system of what is mounted at mountPoint.
func mountRootOf(data []byte, mountPoint string) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// ID parent-ID major:minor root mount-point options ...
		f := strings.Fields(sc.Text())
		if len(f) >= 5 && f[4] == mountPoint {
			return f[3], true
		}
	}
	return "", false
}

// v1Path finds, in a /proc/*/cgroup listing, the path in the v1 hierarchy
// whose controllers are named by mount ("cpu" or "cpu,cpuacct").
func v1Path(data []byte, mount string) (string, bool) {
	want := strings.Split(mount, ",")
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 || f[1] == "" {
			continue
		}
		controllers := strings.Split(f[1], ",")
		if hasAll(controllers, want) {
			return f[2], true
		}
	}
	return "", false
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
