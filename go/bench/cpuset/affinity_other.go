//go:build !linux

package cpuset

import "errors"

var errUnsupported = errors.New("CPU affinity is a Linux feature here")

// Usable is not known outside Linux.
func Usable() (Set, error) { return nil, errUnsupported }

// OfProcess is not known outside Linux.
func OfProcess(int) (Set, error) { return nil, errUnsupported }

// PinProcess is not supported outside Linux.
func PinProcess(Set) error { return errUnsupported }

// WithThreadAffinity is not supported outside Linux.
func WithThreadAffinity(Set, func() error) error { return errUnsupported }
