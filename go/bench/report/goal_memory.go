package report

import (
	"fmt"
	"math"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// A CPU verdict is only half a trade: a runtime can spend memory to save
// CPU (a larger heap collected less often). So every goal that limits CPU
// shows, beside its verdicts, the server's resident set against the
// baseline's in the same cell, where both were measured.

// cpuMetrics are the metrics whose limits a memory ratio accompanies.
var cpuMetrics = map[string]bool{
	schema.MetricServerCPUPerOp: true,
	schema.MetricServerCPU:      true,
	schema.MetricTotalCPU:       true,
	// Requests per second of server CPU: CPU per request, inverted.
	schema.MetricQPSPerServerCore: true,
}

// limitsCPU reports whether one of the goal's limits is on CPU.
func (s Goal) limitsCPU() bool {
	for _, l := range s.Limits {
		if cpuMetrics[l.Metric] {
			return true
		}
	}
	return false
}

// memoryRatio is the cell's server RSS over its baseline's, as every table
// gives a ratio (tableRatio), or 0 where the goal limits no CPU or either
// RSS is missing.
func (s Goal) memoryRatio(base, r Row) float64 {
	if !s.limitsCPU() {
		return 0
	}
	bm, okb := base.Metric(schema.MetricServerRSS)
	xm, okx := r.Metric(schema.MetricServerRSS)
	if !okb || !okx || bm.Median <= 0 || xm.Median <= 0 {
		return 0
	}
	ratio, _ := tableRatio(xm, bm, pairedByRound(base, r, bm, xm))
	if math.IsNaN(ratio) {
		return 0
	}
	return ratio
}

// memoryCell is a row's memory ratio as the table shows it.
func (v goalVerdict) memoryCell() string {
	if v.memory == 0 {
		return missing
	}
	return fmt.Sprintf("%.2fx", v.memory)
}

// memoryRange is the least and greatest memory ratio among the rows, and
// whether any row has one.
func memoryRange(rows []goalVerdict) (lo, hi float64, ok bool) {
	for _, v := range rows {
		if v.memory == 0 {
			continue
		}
		if !ok || v.memory < lo {
			lo = v.memory
		}
		if !ok || v.memory > hi {
			hi = v.memory
		}
		ok = true
	}
	return lo, hi, ok
}

// memoryNote is the summary's sentence on memory, or "" without ratios.
func (s Goal) memoryNote(rows []goalVerdict) string {
	lo, hi, ok := memoryRange(rows)
	if !ok {
		return ""
	}
	base := displayName(s.Names, s.Baseline)
	if fmt.Sprintf("%.2f", lo) == fmt.Sprintf("%.2f", hi) {
		return fmt.Sprintf(" Server RSS beside these CPU figures: %.2fx %s's.", lo, base)
	}
	return fmt.Sprintf(" Server RSS beside these CPU figures: %.2fx to %.2fx %s's.", lo, hi, base)
}
