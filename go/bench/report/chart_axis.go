package report

import (
	"math"
	"strconv"
	"strings"
)

// axis maps data values onto [0, 1] of a chart's height and chooses its
// ticks.
type axis struct {
	min, max float64
	log      bool
	ticks    []float64
}

// linearAxis spans 0 (or lo, if negative) to a round number above hi, with
// about five ticks at steps of 1, 2 or 5 times a power of ten.
func linearAxis(lo, hi float64) axis {
	lo = math.Min(lo, 0)
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	a := axis{min: math.Floor(lo/step) * step, max: math.Ceil(hi/step) * step}
	for i := 0; ; i++ {
		v := a.min + float64(i)*step
		if v > a.max+step/2 {
			break
		}
		// Round away float drift (0.30000000000000004) so labels are clean.
		a.ticks = append(a.ticks, roundTo(v, step))
	}
	return a
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch norm := raw / mag; {
	case norm <= 1:
		return mag
	case norm <= 2:
		return 2 * mag
	case norm <= 5:
		return 5 * mag
	}
	return 10 * mag
}

func roundTo(v, step float64) float64 {
	decimals := max(0, -int(math.Floor(math.Log10(step))))
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', decimals, 64), 64)
	return f
}

// logAxis spans the powers of ten around the positive data, with a tick at
// each.
func logAxis(lo, hi float64) axis {
	if lo <= 0 || hi <= 0 {
		lo, hi = 1, 10
	}
	a := axis{log: true, min: math.Pow(10, math.Floor(math.Log10(lo))), max: math.Pow(10, math.Ceil(math.Log10(hi)))}
	if a.max <= a.min {
		a.max = a.min * 10
	}
	for e := math.Log10(a.min); e <= math.Log10(a.max)+1e-9; e++ {
		a.ticks = append(a.ticks, math.Pow(10, math.Round(e)))
	}
	return a
}

// pos returns where v falls on the axis, 0 at min and 1 at max, clamped.
func (a axis) pos(v float64) float64 {
	var p float64
	if a.log {
		p = (math.Log10(v) - math.Log10(a.min)) / (math.Log10(a.max) - math.Log10(a.min))
	} else {
		p = (v - a.min) / (a.max - a.min)
	}
	return math.Max(0, math.Min(1, p))
}

// tickLabel prints a tick compactly: 0, 0.5, 250, 2.5k, 10M.
func tickLabel(v float64) string {
	abs := math.Abs(v)
	for _, s := range []struct {
		div    float64
		suffix string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if abs >= s.div {
			return trimFloat(v/s.div) + s.suffix
		}
	}
	return trimFloat(v)
}

func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
