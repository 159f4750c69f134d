package main

import (
	"fmt"
	"io"

	"github.com/grpcbench/grpcbench/go/bench/placement"
)

// place decides the placement for this run (-cpus, package placement); it
// pins nothing when the server is not ours to start (-addr).
func (cfg *config) place() placement.Placement {
	if cfg.serverPath == "" && cfg.cpus != placement.Off {
		return placement.Unpinned("the server runs elsewhere (-addr)")
	}
	return cfg.cpuSpec.Resolve()
}

// pinSelf pins this process to the load generator's CPUs; on failure the
// run goes on unpinned, and says so.
func pinSelf(p *placement.Placement, log io.Writer) {
	if err := p.PinSelf(); err != nil {
		fmt.Fprintf(log, "[%s] %v\n", suite, err)
	}
}
