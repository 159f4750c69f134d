package report

// DefaultLayout renders a suite without a layout of its own: one table of
// all scenarios with the commonly read metrics, and a bar chart of the
// first of them.
var DefaultLayout = Layout{Sections: []Section{
	ScenarioTable{Title: "Results"},
	ChartSection{Kind: BarChart},
}}

// Shared by every suite's layout, and so never to be changed by one.

// ImplNames name this repository's servers in the "impl" parameter of the
// suites that compare them; "go_tuned" and "lisp_tuned" are the servers
// with their tuning flags (bench/routeguide/matrix.bzl), shown beside the
// defaults and judged against each other.
var ImplNames = map[string]string{"go": "Go", "lisp": "Lisp", "go_tuned": "Go, tuned", "lisp_tuned": "Lisp, tuned"}

// LiveHeapTitle heads the tables of each server's heap after a repetition,
// beside its RSS: what its heap holds after a collection, where RSS is what
// the process holds from the system. Shown without a ratio of the servers'
// figures, since clgrpc's counts its program and Go's does not.
const LiveHeapTitle = "Server live heap (after each repetition: what the last collection left; " +
	"clgrpc's also holds its program's own code and data, which SBCL keeps in its heap, and the " +
	"garbage of older generations it did not collect)"

// QuotaSweepStatement introduces a CPU-quota sweep's SweepGeoMean: point is
// the operating point its cells hold, capacity what its capacity metric is
// called ("Req/s").
func QuotaSweepStatement(point, capacity string) string {
	return "The Lisp server's figure over the Go server's, as a geometric mean over the sweep's " +
		"capped cells, so that no one quota stands for the sweep (" + point + "). Each cell's ratio " +
		"is estimated from its own rounds, paired as the servers ran in turns (Hodges-Lehmann, as " +
		"the goals do); the mean combines those estimates, and its interval treats the cells as a " +
		"sample of operating points. " + capacity + " counts only the cells both servers limited."
}

// The Lisp/Go ratio of a pivot table over "impl": as a percentage with
// "faster" or "slower" (throughput), or as a factor (costs).
var (
	LispOverGoPercent = &PivotRatio{Num: "lisp", Den: "go", Percent: true, Slowdown: true}
	LispOverGoFactor  = &PivotRatio{Num: "lisp", Den: "go", Factor: true}
)
