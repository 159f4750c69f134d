package serverproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// statusField reads one numeric field of /proc/PID/status ("VmRSS",
// "Threads"); for sizes the kernel reports kB.
func statusField(pid int, name string) (int64, error) {
	v, err := statusFields(pid, name)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// statusFields reads numeric fields of /proc/PID/status in one read, in
// the order of names.
func statusFields(pid int, names ...string) ([]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	found := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasSuffix(f[0], ":") {
			if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				found[strings.TrimSuffix(f[0], ":")] = v
			}
		}
	}
	out := make([]int64, len(names))
	for i, name := range names {
		v, ok := found[name]
		if !ok {
			return nil, fmt.Errorf("no %s in /proc/%d/status", name, pid)
		}
		out[i] = v
	}
	return out, nil
}

// RSS is the server's resident set size in bytes (Linux only).
func (p *Process) RSS() (int64, error) {
	kib, err := statusField(p.PID(), "VmRSS")
	return kib * 1024, err
}

// AnonRSS is the anonymous part of the server's resident set in bytes:
// its heap and stacks, without the mapped files (binary, libraries) that a
// count of connections does not change (Linux only).
func (p *Process) AnonRSS() (int64, error) {
	kib, err := statusField(p.PID(), "RssAnon")
	return kib * 1024, err
}

// Threads is the server's thread count (Linux only).
func (p *Process) Threads() (int, error) {
	n, err := statusField(p.PID(), "Threads")
	return int(n), err
}

// OpenSockets is the number of sockets the server has open: its
// connections, listeners and any other socket (Linux only).
func (p *Process) OpenSockets() (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", p.PID())
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		// A descriptor closed meanwhile has no link: it is not counted.
		if target, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n, nil
}
