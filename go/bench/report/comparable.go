package report

import "github.com/grpcbench/grpcbench/go/bench/schema"

// Refusal is why two results must not be related by a ratio, a goal or a
// comparison: only results measured in turns in one run, on one host, are.
// A machine's figures drift over an afternoon (a co-tenant of a virtual
// machine, a warmer room), and a cached result is the first measurement of
// its inputs, possibly from long ago: two separate runs differ by more than
// their code, however close in time they were made.
type Refusal int

const (
	// Comparable: one file, or files of one run on one host.
	Comparable Refusal = iota
	// DifferentHosts: the host keys differ, or one is not recorded.
	DifferentHosts
	// SeparateActions: one host, and separate runs (or a run not
	// recorded), so separate build actions.
	SeparateActions
)

func (r Refusal) String() string {
	switch r {
	case DifferentHosts:
		return "measured on different hosts"
	case SeparateActions:
		return "measured in separate actions"
	}
	return ""
}

// Incomparable says why rows a and b must not be related by a ratio or a
// goal, or "" when they may: measured in one file, or in one run on one
// host (see Refusal).
func Incomparable(a, b Row) string {
	if a.Env == nil || b.Env == nil || a.Env == b.Env {
		return ""
	}
	return refusal(*a.Env, *b.Env).String()
}

// refusal says whether results of environments a and b may be related.
func refusal(a, b schema.Environment) Refusal {
	if !sameHost(a, b) {
		return DifferentHosts
	}
	ra, rb := a.Extra[schema.ExtraRunID], b.Extra[schema.ExtraRunID]
	if ra == "" || ra != rb {
		return SeparateActions
	}
	return Comparable
}

// sameHost reports whether a and b were measured on one machine: by the
// host key the benchmark rules record, or, for files without one, the same
// CPU model, CPU count, memory and kernel.
func sameHost(a, b schema.Environment) bool {
	known := func(h string) bool { return h != "" && h != "unknown" }
	if known(a.Host) && known(b.Host) {
		return a.Host == b.Host
	}
	if known(a.Host) != known(b.Host) {
		return false
	}
	return a.CPUModel == b.CPUModel && a.CPUCount == b.CPUCount && a.MemoryBytes == b.MemoryBytes &&
		a.Kernel == b.Kernel
}
