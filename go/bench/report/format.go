package report

import (
	"math"
	"strconv"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// FormatValue renders a value with its unit the way a person reads it:
// "3.50 s", "65.6 ms", "880 KiB", "14,271 allocs", "1.29x". Time and
// byte units are scaled; counts and rates get thousands separators.
func FormatValue(v float64, unit string) string {
	switch unit {
	case schema.UnitSeconds:
		return FormatDuration(v)
	case schema.UnitNanoseconds:
		return FormatDuration(v / 1e9)
	case schema.UnitNsPerOp:
		return FormatDuration(v/1e9) + "/op"
	case schema.UnitBytesPerOp, schema.UnitBytes:
		return FormatBytes(v)
	case schema.UnitAllocsPerOp:
		return FormatNumber(v)
	case schema.UnitReqPerSec, schema.UnitMsgPerSec:
		return FormatNumber(v) + " " + unit
	case schema.UnitRatio:
		return FormatNumber(v) + "x"
	case schema.UnitCount:
		return FormatNumber(v)
	}
	return FormatNumber(v) + " " + unit
}

// FormatDuration scales seconds to s, ms, µs or ns with three significant
// digits.
func FormatDuration(seconds float64) string {
	abs := math.Abs(seconds)
	switch {
	case seconds == 0:
		return "0 s"
	case abs >= 1:
		return sig3(seconds) + " s"
	case abs >= 1e-3:
		return sig3(seconds*1e3) + " ms"
	case abs >= 1e-6:
		return sig3(seconds*1e6) + " µs"
	}
	return sig3(seconds*1e9) + " ns"
}

// FormatBytes scales bytes by powers of 1024 (KiB, MiB, GiB): Go's
// allocation counters are binary sizes.
func FormatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for math.Abs(b) >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return FormatNumber(b) + " B"
	}
	return sig3(b) + " " + units[i]
}

// FormatNumber prints a plain number: whole numbers of four or more digits
// with thousands separators and no decimals ("30,850"), smaller ones with
// three significant digits ("65.6", "0.133").
func FormatNumber(v float64) string {
	if math.Abs(v) >= 999.5 || v == math.Trunc(v) {
		// Whole numbers are counts: "28" allocs, "10" clients, not "28.0".
		return groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	}
	return sig3(v)
}

// sig3 formats v with three significant digits and no exponent, the
// precision benchmark noise leaves meaningful.
func sig3(v float64) string {
	if v == 0 {
		return "0"
	}
	abs := math.Abs(v)
	if abs >= 999.5 {
		return groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	}
	// Digits after the point so that three significant digits remain,
	// computed after rounding so 9.996 becomes "10.0", not "10.00".
	decimals := 2 - int(math.Floor(math.Log10(abs)))
	rounded, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	if r := math.Abs(rounded); r > 0 {
		decimals = 2 - int(math.Floor(math.Log10(r)))
	}
	decimals = max(decimals, 0)
	return strconv.FormatFloat(rounded, 'f', decimals, 64)
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// FormatPercent prints a change as a whole-number percentage ("26%"), with
// two decimals below 1% so that 0.13% does not read as 0%. Deltas are
// noisy beyond whole percents; ratios use FormatRatioPercent.
func FormatPercent(fraction float64) string {
	p := fraction * 100
	if math.Abs(p) < 1 && p != 0 {
		return strconv.FormatFloat(p, 'f', 2, 64) + "%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// FormatRatioPercent prints a ratio as a percentage with three significant
// digits: "0.130%", "1.50%", "33.5%", "102%".
func FormatRatioPercent(fraction float64) string {
	return sig3(fraction*100) + "%"
}

// FormatFactor prints a multiplier: "2.1x", "794x".
func FormatFactor(f float64) string {
	if math.Abs(f) >= 10 {
		return FormatNumber(math.Round(f)) + "x"
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + "x"
}

// metricLabels are the names tables print for the harness's metrics.
var metricLabels = map[string]string{
	schema.MetricWallTime:          "Wall time",
	schema.MetricOps:               "Ops",
	schema.MetricErrors:            "Errors",
	schema.MetricReqPerSec:         "req/s",
	schema.MetricMsgPerSec:         "msg/s",
	schema.MetricNsPerOp:           "ns/op",
	schema.MetricClientCPU:         "Client CPU",
	schema.MetricServerCPU:         "Server CPU",
	schema.MetricTotalCPU:          "Total CPU",
	schema.MetricClientCPUPerOp:    "Client CPU ns/op",
	schema.MetricServerCPUPerOp:    "Server CPU ns/op",
	schema.MetricCPUPerWall:        "CPU/wall ratio",
	schema.MetricLatencyP50:        "Latency p50",
	schema.MetricLatencyP90:        "Latency p90",
	schema.MetricLatencyP95:        "Latency p95",
	schema.MetricLatencyP99:        "Latency p99",
	schema.MetricLatencyP999:       "Latency p99.9",
	schema.MetricLatencyMax:        "Latency max",
	schema.MetricBytesPerOp:        "Bytes/op",
	schema.MetricAllocsPerOp:       "Allocs/op",
	schema.MetricCPUPressure:       "Host CPU pressure",
	schema.MetricCPUSteal:          "Host CPU steal",
	schema.MetricServerThrottled:   "Server throttled by its CPU quota",
	schema.MetricServerCPUPressure: "Server CPU pressure (throttling included)",
	schema.MetricSendLagP50:        "Send lag p50",
	schema.MetricSendLagP99:        "Send lag p99",
	schema.MetricSendLagMax:        "Send lag max",
	schema.MetricEncodedBytes:      "Encoded bytes",
	// The RouteGuide and connection-scale suites' own (go/routeguide/loadgen).
	schema.MetricServerRSS:                "Server RSS",
	schema.MetricServerThreads:            "Server threads",
	schema.MetricServerParallelism:        "Server CPUs",
	schema.MetricServerLiveHeap:           "Server live heap",
	schema.MetricServerMarginalRSSPerConn: "Server marginal RSS per connection",
	schema.MetricServerConnsHeld:          "Connections the server held",
	schema.MetricServerRSSPerConn:         "Server RSS per connection",
	// gRPC's benchmark protocol (go/qps).
	schema.MetricQPSPerServerCore:  "QPS per server core",
	schema.MetricServerUtilisation: "Server utilisation",
	schema.MetricClientUtilisation: "Client utilisation",
}

// shareMetrics are ratio metrics that are a share of time, printed as
// percentages: the host's CPU pressure (cri-bench) is 0.98 of the wall time,
// "98%", not "0.98x".
var shareMetrics = map[string]bool{
	schema.MetricCPUPressure:       true,
	schema.MetricCPUSteal:          true,
	schema.MetricServerThrottled:   true,
	schema.MetricServerCPUPressure: true,
	schema.MetricServerUtilisation: true,
	schema.MetricClientUtilisation: true,
}

// FormatMetric formats a metric's median as tables show it: shares as
// percentages, everything else by its unit.
func FormatMetric(name string, v float64, unit string) string {
	if shareMetrics[name] {
		return FormatPercent(v)
	}
	return FormatValue(v, unit)
}

// MetricLabel is the display name of a metric: a known label, or the name
// with spaces for underscores.
func MetricLabel(name string) string {
	if l, ok := metricLabels[name]; ok {
		return l
	}
	s := strings.ReplaceAll(name, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
