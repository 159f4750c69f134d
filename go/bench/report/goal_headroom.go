package report

import (
	"fmt"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// capacityMetrics are the figures that measure how much a server does per
// second: a server short of saturation could have done more.
var capacityMetrics = map[string]bool{
	schema.MetricReqPerSec:        true,
	schema.MetricMsgPerSec:        true,
	schema.MetricQPSPerServerCore: true,
}

// headroom is how busy each server was in a cell of a goal about servers
// (Goal.Bottleneck), as a share of its CPUs: its median utilisation, at
// most 1. A server at 86% could have done up to 1/0.86 times its figure,
// so a capacity ratio x/base is known only to lie between
// (x/base) x baseUtil (the baseline understated) and (x/base) / xUtil (the
// configuration understated). A bound must hold over that whole range: a
// req/s ratio of at least 1.09x over a baseline 86% busy is only at least
// 0.94x of its capacity, so "at least 1x" is not met by it. The zero
// value is no headroom: figures that are not capacities.
type headroom struct {
	baseUtil, xUtil float64
}

func (h headroom) base() float64 { return scaleOr1(h.baseUtil) }
func (h headroom) x() float64    { return scaleOr1(h.xUtil) }

func scaleOr1(u float64) float64 {
	if u <= 0 {
		return 1
	}
	return min(u, 1)
}

// widen scales the ratio's bounds over the headroom: Lo by the baseline's
// utilisation, Hi by the configuration's inverse.
func (h headroom) widen(r ratioInterval) ratioInterval {
	if !r.Bounded {
		return r
	}
	r.Lo *= h.base()
	r.Hi /= h.x()
	return r
}

// note is what a ratio's cell says of the headroom its bounds were
// widened by; nothing when there was none (both servers fully busy, or no
// capacity).
func (h headroom) note() string {
	if h.base() == 1 && h.x() == 1 {
		return ""
	}
	return fmt.Sprintf("; bounds over the servers' headroom, %.0f%% and %.0f%% busy", 100*h.base(), 100*h.x())
}

// headroom is the headroom of a limit on a capacity in a goal about servers,
// or why it is unknown; the zero value for any other limit.
func (s Goal) headroom(l RatioLimit, base, r Row) (headroom, string) {
	if s.Bottleneck == "" || !capacityMetrics[l.Metric] {
		return headroom{}, ""
	}
	bu, okb := base.Metric(schema.MetricServerUtilisation)
	xu, okx := r.Metric(schema.MetricServerUtilisation)
	if !okb || !okx || bu.Median <= 0 || xu.Median <= 0 {
		return headroom{}, "no " + MetricLabel(schema.MetricServerUtilisation)
	}
	return headroom{baseUtil: bu.Median, xUtil: xu.Median}, ""
}
