// Package report renders results files (go/bench/schema) as Markdown tables
// and SVG charts, and compares two sets of results for significant change.
//
// The building blocks are small functions a suite composes with its own
// layout: ComparisonTable ("Metric | List | Stream | Delta"), RatioColumn
// ("ratio to X"), ScalingTable (throughput efficiency as clients grow),
// MatrixTable (any pivot of rows by columns), and Chart for line and bar
// charts. A Layout arranges them into sections. Each suite registers its
// own (Register, from a package of the suite's that the programs rendering
// it import); Render takes Options.Layouts first, then the registered
// layout, then DefaultLayout, one table of the scenarios. All output is deterministic,
// so reports are reproducible build artifacts and golden-testable.
package report
