// Package suites links every benchmark suite of this repository into a
// program that renders or compares results of any of them
// (go/bench/cmd/benchreport, go/bench/docsync): each suite's package
// registers its layout, goals and gated metrics with go/bench/report. A
// new suite adds its package here; a load generator links only its own.
package suites

import (
	// The "cri" suite.
	_ "github.com/grpcbench/grpcbench/go/cri/reportlayout"
	// The handler-cost suites, "handlercost" and "handlercost_shared_cpus".
	_ "github.com/grpcbench/grpcbench/go/handlercost/reportlayout"
	// The in-process channel's "tournament" suite.
	_ "github.com/grpcbench/grpcbench/go/inprocgrpc/tournament/reportlayout"
	// The "kubernetes" suite.
	_ "github.com/grpcbench/grpcbench/go/kcpbench/reportlayout"
	// The "qps" suite.
	_ "github.com/grpcbench/grpcbench/go/qps/reportlayout"
	// The RouteGuide suites and connection scale.
	_ "github.com/grpcbench/grpcbench/go/routeguide/reportlayout"
)
