package main

import (
	"fmt"
)

// scenario is one measured configuration: a method over a server's
// containers, with a codec.
type scenario struct {
	method      method
	containers  int
	annotations int
	perChunk    int    // chunked only; 0 otherwise
	codec       string // mockcri's Transport.Codec
	// namedCodec puts the codec in the name: the run measures several.
	namedCodec bool
}

// name is the scenario's id in the results, e.g.
// "chunked/containers=1024/annotations=32/per_chunk=16", with
// "/codec=floor" at the end when the run measured several codecs.
func (s scenario) name() string {
	n := fmt.Sprintf("%s/containers=%d/annotations=%d", s.method, s.containers, s.annotations)
	if s.method == methodChunked {
		n += fmt.Sprintf("/per_chunk=%d", s.perChunk)
	}
	if s.namedCodec {
		n += "/codec=" + s.codec
	}
	return n
}

// params are the scenario's parameters in the results. per_chunk appears
// only where it applies, so that the report's "cri" layout puts a list or
// stream row next to each chunk size. window, buffer, pool and codec are
// the transport tuning every method ran with (0: grpc-go's default), and
// gogc the peers' garbage collector setting, so results taken with
// different tuning never pass for one another.
func (s scenario) params(transport string, cfg config) map[string]any {
	n, tune := cfg.n, cfg.tuneFor(s.codec)
	p := map[string]any{
		"method":      string(s.method),
		"containers":  s.containers,
		"annotations": s.annotations,
		"n":           n,
		"transport":   transport,
		"window":      tune.Window,
		"buffer":      tune.Buffer,
		"pool":        tune.Pool,
		"codec":       tune.Codec,
		"gogc":        cfg.gcPercent,
	}
	if s.method == methodChunked {
		p["per_chunk"] = s.perChunk
	}
	return p
}

// serverGroup is the scenarios measured in turns: the same containers,
// served by one server per codec.
type serverGroup struct {
	containers, annotations int
	scenarios               []scenario
}

// plan expands the flags into server groups, containers and annotations
// outermost, then each codec, each method in flag order, each chunk size
// for chunked.
func plan(cfg config) []serverGroup {
	var groups []serverGroup
	for _, c := range cfg.containers {
		for _, a := range cfg.annotations {
			groups = append(groups, serverGroup{containers: c, annotations: a, scenarios: scenarios(cfg, c, a)})
		}
	}
	return groups
}

func scenarios(cfg config, containers, annotations int) []scenario {
	var out []scenario
	for _, codec := range cfg.codecs {
		base := scenario{containers: containers, annotations: annotations, codec: codec, namedCodec: len(cfg.codecs) > 1}
		for _, m := range cfg.modes {
			s := base
			s.method = m
			if m != methodChunked {
				out = append(out, s)
				continue
			}
			for _, per := range cfg.perChunk {
				s.perChunk = per
				out = append(out, s)
			}
		}
	}
	return out
}
