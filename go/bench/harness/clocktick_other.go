//go:build !linux

package harness

// clockTicksPerSecond: /proc/<pid>/stat only exists on Linux, so reading it
// fails first on other systems; this value is never used there.
func clockTicksPerSecond() int64 { return 100 }
