//go:build !linux

package cgroup

import "syscall"

// Start runs start: control groups are Linux's, and New fails elsewhere.
func (g *Group) Start(attr *syscall.SysProcAttr, start func() error, cloneInto bool) error {
	return start()
}

// CloneRefused is false: Start never clones into a group here.
func CloneRefused(err error) bool { return false }

// AddToTracking does nothing: there are no groups here.
func (g *Group) AddToTracking(pid int) error { return nil }
