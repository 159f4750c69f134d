// Package placement decides where a benchmark's server and its load
// generator run: on disjoint sets of CPUs, so that what one side costs is
// not paid by the other. Every benchmark that starts its own server takes
// the same -cpus flag (Flag), pins itself with PinSelf, starts the server
// on Server, and records the outcome with Record.
package placement

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// The -cpus modes besides an explicit SERVER/CLIENT pair.
const (
	Auto = "auto" // split the usable CPUs by physical core when there are two or more
	Off  = "off"  // share every CPU
)

// Usage is the -cpus flag's help text.
const Usage = "CPU `placement`: auto (the server on the first half of the usable physical cores, SMT siblings kept together, and this load generator on the rest; unpinned with one), off (both share every CPU), or SERVER/CLIENT CPU lists such as 0/1"

// Spec is a parsed -cpus value.
type Spec struct {
	mode     string    // Auto, Off, or "" for explicit sets
	explicit Placement // the sets of SERVER/CLIENT
}

// Parse checks a -cpus value: auto, off, or SERVER/CLIENT as two disjoint
// CPU lists ("0/1", "0-1/2-3").
func Parse(s string) (Spec, error) {
	switch s {
	case Auto, Off:
		return Spec{mode: s}, nil
	}
	srv, cli, ok := strings.Cut(s, "/")
	if !ok {
		return Spec{}, fmt.Errorf("want auto, off or SERVER/CLIENT CPU lists such as 0/1, got %q", s)
	}
	var p Placement
	var err error
	if p.Server, err = cpuset.Parse(srv); err != nil {
		return Spec{}, err
	}
	if p.Client, err = cpuset.Parse(cli); err != nil {
		return Spec{}, err
	}
	if p.Server.Overlaps(p.Client) {
		return Spec{}, fmt.Errorf("the server's CPUs %s and the load generator's %s overlap", p.Server, p.Client)
	}
	return Spec{explicit: p}, nil
}

// Placement is where the server and the load generator run.
type Placement struct {
	Server, Client cpuset.Set // both empty: unpinned
	// Why says, when unpinned, why: recorded with the results.
	Why string
}

// Unpinned is a placement that pins nothing, for the reason given.
func Unpinned(why string) Placement { return Placement{Why: why} }

// InProcess is the placement of a benchmark whose client and server are one
// process (the in-process channel tournament): there is nothing to split,
// and Record says which CPUs the two shared.
func InProcess() Placement {
	usable, err := cpuset.Usable()
	if err != nil {
		return Unpinned("in-process, client and server on the same CPUs: " + err.Error())
	}
	return Unpinned(fmt.Sprintf("in-process, client and server sharing CPUs %s", usable))
}

// Resolve is the placement spec asks for on this machine: auto splits the
// usable CPUs by physical core (cpuset.Split), and pins nothing when there
// is only one.
func (s Spec) Resolve() Placement {
	switch s.mode {
	case Off:
		return Unpinned("-cpus off")
	case "":
		return s.explicit
	}
	usable, err := cpuset.Usable()
	if err != nil {
		return Unpinned(err.Error())
	}
	server, client, ok := cpuset.Split(usable)
	if !ok {
		return Unpinned(fmt.Sprintf("one usable CPU (%s)", usable))
	}
	return Placement{Server: server, Client: client}
}

// Pinned reports whether the placement gives each side CPUs of its own.
func (p Placement) Pinned() bool { return len(p.Client) > 0 }

// PinSelf binds this process (the load generator) to the client's CPUs and
// sizes GOMAXPROCS to them. If that fails the placement becomes unpinned,
// saying why, and the error is returned for the log: the run goes on.
func (p *Placement) PinSelf() error {
	if !p.Pinned() {
		return nil
	}
	if err := cpuset.PinProcess(p.Client); err != nil {
		*p = Unpinned(err.Error())
		return fmt.Errorf("running unpinned: %w", err)
	}
	runtime.GOMAXPROCS(len(p.Client))
	return nil
}

// Record writes the placement into a results file's environment.
func (p Placement) Record(extra map[string]string) {
	if !p.Pinned() {
		extra[schema.ExtraCPUs] = "unpinned: " + p.Why
		return
	}
	extra[schema.ExtraServerCPUs] = p.Server.String()
	extra[schema.ExtraClientCPUs] = p.Client.String()
}
