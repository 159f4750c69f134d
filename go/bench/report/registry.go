package report

import (
	"fmt"
	"slices"
	"sync"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Suite is what a benchmark suite tells the report about itself: how its
// results are laid out and judged, and the metrics a regression gate
// judges it on. Each suite registers its own (Register), from a package of
// its own that the programs rendering or comparing it import, as
// database/sql drivers are: adding a suite edits no shared package.
type Suite struct {
	// Name is the results' suite name (schema.File.Suite).
	Name   string
	Layout Layout
	// Primary are the metrics a regression gate judges the suite on: one
	// form of its throughput, what the server spends per operation, and
	// the latency its goals name. Every other metric is shown beside them
	// and never gated on: tested together, twenty metrics of one scenario
	// find a "significant" change by chance in most runs. Empty:
	// DefaultPrimaryMetrics.
	Primary []string
}

// DefaultPrimaryMetrics are the gated metrics of a suite that names none,
// or that no linked package registered. Read only.
var DefaultPrimaryMetrics = []string{schema.MetricReqPerSec, schema.MetricNsPerOp, schema.MetricServerCPUPerOp}

var (
	suitesMu sync.RWMutex
	suites   = map[string]Suite{}
)

// Register makes s's layout and primary metrics the ones Render and
// Compare use for its results. It panics if the name is empty or already
// registered: two layouts for one suite are a programming error.
func Register(s Suite) {
	suitesMu.Lock()
	defer suitesMu.Unlock()
	if s.Name == "" {
		panic("report.Register: a suite without a name")
	}
	if _, dup := suites[s.Name]; dup {
		panic(fmt.Sprintf("report.Register: suite %q registered twice", s.Name))
	}
	suites[s.Name] = s
}

// RegisteredSuite returns the registered suite of that name, if any.
func RegisteredSuite(name string) (Suite, bool) {
	suitesMu.RLock()
	defer suitesMu.RUnlock()
	s, ok := suites[name]
	return s, ok
}

// IsPrimaryMetric reports whether a regression gate judges suite on metric.
func IsPrimaryMetric(suite, metric string) bool {
	names := DefaultPrimaryMetrics
	if s, ok := RegisteredSuite(suite); ok && len(s.Primary) > 0 {
		names = s.Primary
	}
	return slices.Contains(names, metric)
}
