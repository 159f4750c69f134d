package serverproc

import (
	"maps"
	"strconv"
	"strings"
)

// A server may print, after its announcement, one line
//
//	runtime KEY=VALUE KEY=VALUE ...
//
// naming what its runtime sized itself to: "cpus" is the parallelism it
// runs with (Go's GOMAXPROCS; the CPUs clgrpc counted for its reactors and
// handler lanes), the rest its own (gogc, heap_max, ...). The harness reads
// it from the server rather than assuming what the placement gave it.

// noteRuntime keeps line's settings if it is a runtime line; only the
// line right after the announcement is offered, so a later line that
// happens to begin with "runtime " cannot replace them.
func (p *Process) noteRuntime(line string) {
	rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "runtime ")
	if !ok {
		return
	}
	settings := map[string]string{}
	for _, f := range strings.Fields(rest) {
		if k, v, ok := strings.Cut(f, "="); ok && k != "" {
			settings[k] = v
		}
	}
	p.runtimeMu.Lock()
	defer p.runtimeMu.Unlock()
	p.runtime = settings
}

// Runtime is the settings of the server's runtime line, or nil if it has
// printed none (yet: the line follows the announcement).
func (p *Process) Runtime() map[string]string {
	p.runtimeMu.Lock()
	defer p.runtimeMu.Unlock()
	return maps.Clone(p.runtime)
}

// Parallelism is the parallelism the server says it runs with (its
// runtime line's cpus), or 0 if it has not said.
func (p *Process) Parallelism() int {
	n, err := strconv.Atoi(p.Runtime()["cpus"])
	if err != nil || n < 0 {
		return 0
	}
	return n
}
