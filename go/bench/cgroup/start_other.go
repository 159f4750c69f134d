//go:build !linux

package cgroup

import "syscall"

// Start runs start: control groups are Linux's, and New fails elsewhere.
func (g *Group) Start(attr *syscall.SysProcAttr, start func() error) error { return start() }
