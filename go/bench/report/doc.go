// Package report renders results files (go/bench/schema) as Markdown tables
// and SVG charts, and compares two sets of results for significant change.
//
// The building blocks are small functions a suite composes with its own
// layout: ComparisonTable ("Metric | List | Stream | Delta"), RatioColumn
// ("ratio to X"), ScalingTable (throughput efficiency as clients grow),
// MatrixTable (any pivot of rows by columns), and Chart for line and bar
// charts. A Layout arranges them into sections; suites without a layout get
// DefaultLayout, one table of their scenarios. All output is deterministic,
// so reports are reproducible build artifacts and golden-testable.
package report
