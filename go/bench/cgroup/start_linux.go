package cgroup

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Start runs start, which starts a child process with attr, so that the
// child is born in g's groups: its runtime then sizes itself to the quota
// from its first instruction (Go's GOMAXPROCS reads the cgroup's CPU
// limit), and none of its work runs outside them. Into the v2 group the
// kernel clones it directly (CLONE_INTO_CGROUP, attr's CgroupFD). A v1
// group takes no such flag, but a child is born in its parent thread's v1
// groups: Start moves the calling thread into the quota group around
// start, and back.
func (g *Group) Start(attr *syscall.SysProcAttr, start func() error) error {
	if g.track != "" {
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
	runtime.LockOSThread()
	own, err := threadV1Group(g.v1Root)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	tid := strconv.Itoa(syscall.Gettid())
	if err := write(filepath.Join(g.cpuDir, "tasks"), tid); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("moving the starting thread into %s: %w", g.cpuDir, err)
	}
	startErr := start()
	if err := write(filepath.Join(own, "tasks"), tid); err != nil {
		// The thread stays locked, and so ends with its goroutine rather
		// than run other work under the server's quota.
		return fmt.Errorf("moving the starting thread back to %s: %w", own, err)
	}
	runtime.UnlockOSThread()
	return startErr
}

// threadV1Group is the directory of the calling thread's group in the v1
// hierarchy mounted at root.
func threadV1Group(root string) (string, error) {
	data, err := os.ReadFile("/proc/thread-self/cgroup")
	if err != nil {
		return "", err
	}
	path, ok := v1Path(data, filepath.Base(root))
	if !ok {
		return "", fmt.Errorf("no %s hierarchy in /proc/thread-self/cgroup", filepath.Base(root))
	}
	return filepath.Join(root, path), nil
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
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}
