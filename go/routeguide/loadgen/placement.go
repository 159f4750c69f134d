package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/cpuset"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// The -cpus modes besides an explicit SERVER/CLIENT pair.
const (
	cpusAuto = "auto" // split the usable CPUs when there are two or more
	cpusOff  = "off"  // share every CPU, as before pinning existed
)

// placement is where the server and this load generator run.
type placement struct {
	server, client cpuset.Set // empty: unpinned
	// why says, when unpinned, why: recorded with the results.
	why string
}

// parseCPUs checks -cpus: auto, off, or SERVER/CLIENT as two disjoint CPU
// lists ("0/1", "0-1/2-3").
func parseCPUs(s string) (placement, error) {
	switch s {
	case cpusAuto, cpusOff:
		return placement{}, nil
	}
	srv, cli, ok := strings.Cut(s, "/")
	if !ok {
		return placement{}, fmt.Errorf("want auto, off or SERVER/CLIENT CPU lists such as 0/1, got %q", s)
	}
	var p placement
	var err error
	if p.server, err = cpuset.Parse(srv); err != nil {
		return placement{}, err
	}
	if p.client, err = cpuset.Parse(cli); err != nil {
		return placement{}, err
	}
	if p.server.Overlaps(p.client) {
		return placement{}, fmt.Errorf("the server's CPUs %s and the load generator's %s overlap", p.server, p.client)
	}
	return p, nil
}

// place decides the placement for this run. auto gives the server the
// first half of the usable physical cores and the load generator the rest
// (cpuset.Split); it pins
// nothing when there are fewer than two, or when the server is not ours
// to start (-addr).
func (cfg *config) place() placement {
	switch {
	case cfg.cpus == cpusOff:
		return placement{why: "-cpus off"}
	case cfg.serverPath == "":
		return placement{why: "the server runs elsewhere (-addr)"}
	case cfg.cpus != cpusAuto:
		return cfg.cpuSets
	}
	usable, err := cpuset.Usable()
	if err != nil {
		return placement{why: err.Error()}
	}
	server, client, ok := cpuset.Split(usable)
	if !ok {
		return placement{why: fmt.Sprintf("one usable CPU (%s)", usable)}
	}
	return placement{server: server, client: client}
}

// pinSelf binds this process to the load generator's CPUs and sizes
// GOMAXPROCS to them. On failure the run goes on unpinned, and says so.
func (p *placement) pinSelf(log io.Writer) {
	if len(p.client) == 0 {
		return
	}
	if err := cpuset.PinProcess(p.client); err != nil {
		fmt.Fprintf(log, "[%s] running unpinned: %v\n", suite, err)
		*p = placement{why: err.Error()}
		return
	}
	runtime.GOMAXPROCS(len(p.client))
}

// record writes the placement into the results' environment.
func (p placement) record(extra map[string]string) {
	if len(p.client) == 0 {
		extra[schema.ExtraCPUs] = "unpinned: " + p.why
		return
	}
	extra[schema.ExtraServerCPUs] = p.server.String()
	extra[schema.ExtraClientCPUs] = p.client.String()
}
