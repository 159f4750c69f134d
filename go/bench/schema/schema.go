// Package schema defines the versioned JSON format in which every grpcbench
// benchmark stores its results, and checks files against it.
//
// A results file is the cacheable artifact of a benchmark target: it is
// written by a benchmark binary (through go/bench/harness or by hand, e.g.
// from the Lisp client), validated by cmd/benchvalidate and rendered or
// compared by go/bench/report. Keeping the format small, explicit and
// versioned lets those tools evolve separately from the suites.
package schema

// Version identifies this revision of the format. A file whose "schema" field
// differs is rejected rather than half-read: an incompatible change must bump
// the version so old artifacts fail loudly instead of rendering wrong numbers.
const Version = "grpcbench.results/v1"

// File is one results file: the outcome of running one suite once, with every
// scenario it covers.
type File struct {
	Schema      string      `json:"schema"`
	Suite       string      `json:"suite"`
	Environment Environment `json:"environment"`
	Results     []Result    `json:"results"`
}

// Environment describes where the numbers were measured. Two files are only
// comparable when their environments match closely, so the report prints it
// and the comparison warns when it differs.
type Environment struct {
	CPUModel string `json:"cpu_model"`
	// CPUCount is the number of CPUs the process may run on (runtime.NumCPU,
	// which honours the affinity mask), not the machine's core count.
	CPUCount int `json:"cpu_count"`
	// GOMAXPROCS of the measuring Go process; 0 when not measured from Go.
	GOMAXPROCS int `json:"gomaxprocs,omitempty"`
	// MemoryBytes is the machine's total memory; 0 when unknown.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// Kernel is the operating system name and release, e.g. "Linux 6.12.15".
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go_version"`
	// SBCLVersion is set by suites that run a Common Lisp peer.
	SBCLVersion string `json:"sbcl_version,omitempty"`
	// Platform is GOOS_GOARCH of the measuring binary, e.g. "linux_amd64".
	Platform string `json:"platform"`
	// BuildConfig is the Bazel compilation mode (fastbuild, opt, dbg), or
	// "dev" for a binary built outside the benchmark rule.
	BuildConfig string `json:"build_config"`
	// Revision is the source revision when the build was stamped.
	Revision string `json:"revision,omitempty"`
	// Host describes the machine as tools/bench/host_key.sh does (CPU
	// model, CPUs and their topology, SMT, kernel, governor, memory,
	// virtualisation); results measured by the benchmark rules record it,
	// and the report relates only results of one host.
	Host string `json:"host,omitempty"`
	// MeasuredAt is when the measurement started, RFC 3339 in UTC: a
	// cached result is the first measurement of its inputs, so two cells
	// behind one ratio may come from different times.
	MeasuredAt string `json:"measured_at,omitempty"`
	// Extra holds further facts a suite finds worth recording (e.g. the peer
	// server's binary version). Free-form, string-valued.
	Extra map[string]string `json:"extra,omitempty"`
}

// Status of one scenario.
type Status string

const (
	StatusOK    Status = "ok"
	StatusError Status = "error"
)

// Result is the outcome of one scenario: one point in the suite's parameter
// space, measured over one or more repetitions.
type Result struct {
	// Scenario names the point uniquely within the file, e.g.
	// "unary/clients=10". It has no whitespace so it can be used as a Go
	// benchmark name.
	Scenario string `json:"scenario"`
	// Parameters are the scenario's inputs as JSON scalars (string, number or
	// bool); reports group and pivot on them.
	Parameters map[string]any `json:"parameters,omitempty"`
	Status     Status         `json:"status"`
	// Error explains a failed scenario. With status "ok" it may hold the first
	// per-operation error of a run that had some failing operations (see the
	// "errors" metric).
	Error   string   `json:"error,omitempty"`
	Metrics []Metric `json:"metrics,omitempty"`
}

// Better says which direction of a metric is an improvement; reports use it
// to word deltas ("faster", "less memory") and to mark regressions.
type Better string

const (
	HigherIsBetter Better = "higher"
	LowerIsBetter  Better = "lower"
)

// Metric is one measured quantity of a scenario, with every repetition kept
// so that comparisons can test significance rather than compare two numbers.
type Metric struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit"`
	Better Better    `json:"better"`
	Reps   []float64 `json:"reps"`
	// Min, Median and Max summarise Reps; they are redundant on purpose so
	// that people and simple tools can read a file without computing them.
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}
