package report

import (
	"math"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// DefaultSameWithin is the relative change below which a comparison reads
// "~Same": run-to-run noise of loopback gRPC benchmarks on a shared machine
// is a few percent, so smaller differences are not findings.
const DefaultSameWithin = 0.05

// Wording says how a change of a metric reads. Less and More complete
// "Stream 26% ..." for a decrease and an increase ("faster" and "slower"
// for a time). With Factor set the change reads as a multiple, "Stream uses
// 2.1x more cores", which suits ratios that double rather than grow by 5%.
type Wording struct {
	Less, More string
	Factor     bool
}

// DefaultWording returns the wording for a metric by its name and unit.
func DefaultWording(name, unit string) Wording {
	switch {
	case name == schema.MetricWallTime || unit == schema.UnitNsPerOp:
		return Wording{Less: "faster", More: "slower"}
	case name == schema.MetricCPUPerWall:
		return Wording{Less: "fewer cores", More: "more cores", Factor: true}
	case strings.HasSuffix(name, "_cpu"):
		return Wording{Less: "less CPU", More: "more CPU"}
	case unit == schema.UnitBytesPerOp:
		return Wording{Less: "less memory", More: "more memory"}
	case unit == schema.UnitAllocsPerOp:
		return Wording{Less: "fewer allocs", More: "more allocs"}
	}
	return Wording{Less: "lower", More: "higher"}
}

// Delta describes how b differs from a, from the point of view of the
// variant named who: "**Stream 26% faster**" (bold: an improvement by the
// metric's better direction), "Stream 57% more CPU" (a regression), or
// "~Same" within sameWithin, with the signed change when it rounds to at
// least 1% ("~Same (+4%)").
func Delta(a, b float64, better schema.Better, who string, w Wording, sameWithin float64) string {
	if a == b {
		return "~Same"
	}
	if a == 0 {
		return missing // no relative change from zero
	}
	change := b/a - 1
	if math.Abs(change) < sameWithin {
		if math.Round(math.Abs(change)*100) >= 1 {
			return "~Same (" + signedPercent(change) + ")"
		}
		return "~Same"
	}
	word := w.More
	if change < 0 {
		word = w.Less
	}
	var phrase string
	if w.Factor {
		f := b / a
		if f < 1 {
			f = a / b
		}
		phrase = who + " uses " + FormatFactor(f) + " " + word
	} else {
		phrase = who + " " + FormatPercent(math.Abs(change)) + " " + word
	}
	if improved(change, better) {
		return "**" + phrase + "**"
	}
	return phrase
}

func improved(change float64, better schema.Better) bool {
	if better == schema.HigherIsBetter {
		return change > 0
	}
	return change < 0
}

func signedPercent(change float64) string {
	s := FormatPercent(change)
	if change > 0 {
		s = "+" + s
	}
	return s
}
