package main

import (
	"fmt"

	"github.com/grpcbench/grpcbench/go/handlercost/wire"
)

// longPollHandler is the "handler" parameter of the long-poll mix, whose
// measured calls are the cheap Fast ones.
const longPollHandler = "longpoll"

// scenario is one cell of the grid: a handler kind called by callers over
// conns connections, or the long-poll mix.
type scenario struct {
	kind     handlerKind // what the measured calls call
	conns    int
	callers  int
	longPoll bool // long Sleep calls held open beside the measured ones
}

// scenarios lists the cells by handler kind, then connection count, and
// the long-poll mix at each connection count last.
func (cfg config) scenarios() []scenario {
	var out []scenario
	for _, k := range cfg.kinds {
		callers := k.callers
		if callers == 0 {
			callers = cfg.callers
		}
		for _, n := range cfg.conns {
			out = append(out, scenario{kind: k, conns: n, callers: callers})
		}
	}
	if cfg.polls > 0 {
		for _, n := range cfg.conns {
			out = append(out, scenario{kind: handlerKind{method: wire.Fast}, conns: n, callers: cfg.pollCallers, longPoll: true})
		}
	}
	return out
}

// handler is the cell's "handler" parameter: the kind's name, or longpoll.
func (s scenario) handler() string {
	if s.longPoll {
		return longPollHandler
	}
	return s.kind.name()
}

// name is unique among a report's results, the server first:
// "lisp/sleep_100ms_1000_callers/conns=1/callers=1000".
func (s scenario) name(impl string) string {
	return fmt.Sprintf("%s/%s/conns=%d/callers=%d", impl, s.handler(), s.conns, s.callers)
}

// params are the cell's parameters in the results; the report's
// handler-cost layouts pivot on impl, handler and conns.
func (s scenario) params(impl string, cfg config) map[string]any {
	p := map[string]any{
		"impl":     impl,
		"client":   "go",
		"handler":  s.handler(),
		"conns":    s.conns,
		"callers":  s.callers,
		"duration": cfg.duration.String(),
	}
	if s.longPoll {
		p["polls"] = cfg.polls
		p["poll"] = cfg.poll.String()
	}
	return p
}
