//go:build !linux

package schema

// fillFromOS leaves the portable defaults: the benchmarks run on Linux, and
// other systems only need to build these packages.
func fillFromOS(env *Environment) {}
