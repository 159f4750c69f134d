package report

import (
	"fmt"
	"strings"
)

// The Bottleneck parameter's values (go/bench/harness) that the rules
// read: a server saturated alone, the only value that shows its capacity,
// and neither side saturated.
const (
	bottleneckServer  = "server"
	bottleneckNeither = "neither"
)

// openLoopRate is the parameter of an open-loop cell: the requests per
// second offered on a fixed schedule, whatever the server's answers.
const openLoopRate = "rate"

// applyBottleneck applies a goal's rules for servers under load to a cell
// whose two runs succeeded.
//
// A limit on a capacity (req/s) is judged when the servers alone limited
// the cell and its baseline. A verdict that holds whatever the bottleneck
// stays: a configuration at its capacity that already misses a bound is
// not met, however much the baseline, short of its own capacity,
// understates; and a baseline at its capacity that a figure understating
// the configuration already meets is met. Otherwise the limit is not
// judged: a figure that a saturated client set, or one that no side was
// pushed to, says nothing about the server.
//
// A limit on latency has no such escape. In a closed loop each client
// waits for its answer, so a percentile there is mostly the queue that
// the loop's own throughput builds (Little's law), not the servers' speed:
// latency is judged only in an open loop (the cell's offered rate) with
// neither side saturated, below both servers' capacity; otherwise it is
// not decided.
func (s Goal) applyBottleneck(v *goalVerdict, base, r Row) {
	b, x := base.Param(s.Bottleneck), r.Param(s.Bottleneck)
	if b == "" || x == "" {
		// Results that predate the parameter, or a side whose CPU set was unknown.
		for i := range v.limits {
			v.limits[i] = limitVerdict{decision: NotJudged, text: v.limits[i].text, measured: v.limits[i].measured}
		}
		v.why = "bottleneck not recorded"
		return
	}
	for i, l := range s.Limits {
		lv := &v.limits[i]
		if isLatency(l.Metric) {
			if why := latencyUnjudgeable(base, r, b, x); why != "" {
				*lv = limitVerdict{decision: NotDecided, why: why, text: lv.text, measured: lv.measured}
			}
			continue
		}
		switch {
		case b == bottleneckServer && x == bottleneckServer,
			x == bottleneckServer && lv.decision == NotMet,
			b == bottleneckServer && lv.decision == Met:
			continue
		}
		*lv = limitVerdict{decision: NotJudged, text: lv.text, measured: lv.measured,
			why: fmt.Sprintf("%s: %s-bound, %s: %s-bound", displayName(s.Names, s.Baseline), b, s.configName(r), x)}
	}
}

// latencyUnjudgeable says why a latency cannot be judged in a cell, or ""
// when it can: an open loop, neither side saturated in either run.
func latencyUnjudgeable(base, r Row, b, x string) string {
	switch {
	case base.Param(openLoopRate) == "" || r.Param(openLoopRate) == "":
		return "closed-loop latency"
	case b != bottleneckNeither || x != bottleneckNeither:
		return fmt.Sprintf("latency at a rate not below capacity: %s-bound and %s-bound", b, x)
	}
	return ""
}

// isLatency reports whether a metric is a latency percentile.
func isLatency(metric string) bool { return strings.HasPrefix(metric, "latency_") }

// configName is how the goal's table names a row's configuration.
func (s Goal) configName(r Row) string {
	return AllConfigurations{Vary: s.Vary, Names: s.Names}.columnName(r)
}
