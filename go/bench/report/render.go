package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Layout arranges a suite's report.
type Layout struct {
	Title    string // default: the suite name
	Sections []Section
}

// Options adjusts Render.
type Options struct {
	// Layouts by suite name; suites not in it (or a nil map) use their
	// registered layout (Register), then DefaultLayout.
	Layouts map[string]Layout
	// Charts renders charts as SVG files linked from the Markdown. Off for
	// terminal output, where an image link is noise.
	Charts bool
}

// Report is a rendered report: Markdown and the charts it links to by
// relative file name.
type Report struct {
	Markdown string
	Charts   []ChartFile
}

// Markdown renders files for a terminal: tables only.
func Markdown(files []*schema.File) (string, error) {
	r, err := Render(files, Options{})
	if err != nil {
		return "", err
	}
	return r.Markdown, nil
}

// Render renders every suite found in files, in suite-name order. Files of
// the same suite are merged (e.g. one from the Go client, one from the Lisp
// client); a scenario appearing twice is an error, since two runs of it
// are a comparison (see Compare), not a report.
func Render(files []*schema.File, opts Options) (*Report, error) {
	sets, err := datasets(files)
	if err != nil {
		return nil, err
	}
	var md strings.Builder
	md.WriteString("# Benchmark report\n\n")
	var charts []ChartFile
	for _, d := range sets {
		layout := layoutFor(d.Suite, opts.Layouts)
		p := &Page{namePrefix: d.Suite, drawCharts: opts.Charts}
		title := layout.Title
		if title == "" {
			title = d.Suite
		}
		p.Heading(2, title)
		writeSetup(p, d)
		body := &Page{namePrefix: d.Suite, drawCharts: opts.Charts}
		for _, s := range layout.Sections {
			s.Render(d, body)
		}
		if body.items == 0 {
			// The suite's parameters did not fit its layout (renamed
			// parameters, a partial run): show everything plainly rather
			// than nothing.
			body = &Page{namePrefix: d.Suite, drawCharts: opts.Charts}
			for _, s := range DefaultLayout.Sections {
				s.Render(d, body)
			}
		}
		md.WriteString(p.md.String())
		md.WriteString(body.md.String())
		writeFailures(&md, d)
		charts = append(charts, body.charts...)
	}
	return &Report{Markdown: strings.TrimRight(md.String(), "\n") + "\n", Charts: charts}, nil
}

func layoutFor(suite string, layouts map[string]Layout) Layout {
	if l, ok := layouts[suite]; ok {
		return l
	}
	if s, ok := RegisteredSuite(suite); ok {
		return s.Layout
	}
	return DefaultLayout
}

func datasets(files []*schema.File) ([]*Dataset, error) {
	bySuite := map[string]*Dataset{}
	where := map[string]int{} // suite/scenario -> file index, for the error
	for i, f := range files {
		d := bySuite[f.Suite]
		if d == nil {
			d = &Dataset{Suite: f.Suite}
			bySuite[f.Suite] = d
		}
		if !slices.ContainsFunc(d.Environments, func(e schema.Environment) bool { return sameEnvironment(e, f.Environment) }) {
			d.Environments = append(d.Environments, f.Environment)
		}
		d.Measurements = append(d.Measurements, f.Environment)
		for _, r := range f.Results {
			key := f.Suite + "/" + r.Scenario
			if j, dup := where[key]; dup {
				return nil, fmt.Errorf("suite %s: scenario %s is in input %d and input %d; compare runs with --compare instead", f.Suite, r.Scenario, j+1, i+1)
			}
			where[key] = i
			d.Rows = append(d.Rows, Row{Result: r, Env: &f.Environment})
		}
	}
	var out []*Dataset
	for _, d := range bySuite {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Dataset) int { return strings.Compare(a.Suite, b.Suite) })
	return out, nil
}

func sameEnvironment(a, b schema.Environment) bool {
	return a.CPUModel == b.CPUModel && a.CPUCount == b.CPUCount && a.GOMAXPROCS == b.GOMAXPROCS &&
		a.Kernel == b.Kernel && a.GoVersion == b.GoVersion && a.SBCLVersion == b.SBCLVersion &&
		a.Platform == b.Platform && a.BuildConfig == b.BuildConfig && a.Revision == b.Revision &&
		a.Host == b.Host
}

// writeSetup lists where the numbers come from, as a "Setup" section;
// numbers without their machine are not comparable.
func writeSetup(p *Page, d *Dataset) {
	var b strings.Builder
	for i, e := range d.Environments {
		if len(d.Environments) > 1 {
			fmt.Fprintf(&b, "Environment %d:\n\n", i+1)
		}
		cpu := fmt.Sprintf("%s (%d CPUs", e.CPUModel, e.CPUCount)
		if e.GOMAXPROCS > 0 {
			cpu += fmt.Sprintf(", GOMAXPROCS %d", e.GOMAXPROCS)
		}
		cpu += ")"
		fmt.Fprintf(&b, "- **Platform:** %s, %s build\n", e.Platform, e.BuildConfig)
		fmt.Fprintf(&b, "- **CPU:** %s\n", cpu)
		fmt.Fprintf(&b, "- **Kernel:** %s\n", e.Kernel)
		if e.Host != "" {
			fmt.Fprintf(&b, "- **Host:** %s\n", e.Host)
		}
		fmt.Fprintf(&b, "- **Go:** %s\n", e.GoVersion)
		if e.SBCLVersion != "" {
			fmt.Fprintf(&b, "- **SBCL:** %s\n", e.SBCLVersion)
		}
		if e.Revision != "" {
			fmt.Fprintf(&b, "- **Revision:** %s\n", e.Revision)
		}
		switch {
		case e.Extra[schema.ExtraServerCPUs] != "":
			fmt.Fprintf(&b, "- **CPUs:** server on %s, load generator on %s\n", e.Extra[schema.ExtraServerCPUs], e.Extra[schema.ExtraClientCPUs])
		case e.Extra[schema.ExtraCPUs] != "":
			fmt.Fprintf(&b, "- **CPUs:** %s\n", e.Extra[schema.ExtraCPUs])
		}
		if q := e.Extra[schema.ExtraServerCPUQuota]; q != "" {
			fmt.Fprintf(&b, "- **Server CPU quota:** %s. A throttled server waits for its next period, "+
				"which shows in every latency: these results are for throughput and CPU per request only. "+
				"Linux counts a throttled thread as waiting for a CPU, so the CPU pressure figures, the "+
				"server's and the host's, include the quota's own throttling.\n", q)
		}
		if c := e.Extra[schema.ExtraServerCPUClock]; c != "" {
			fmt.Fprintf(&b, "- **Server CPU time from:** %s\n", c)
		}
		b.WriteString("\n")
	}
	p.Heading(3, "Setup")
	p.md.WriteString(b.String())
	if t := measurementsTable(d.Measurements); len(t.Rows) > 0 {
		p.md.WriteString("Measurements, one per results file:\n\n" + t.Markdown() + "\n")
	}
	p.md.WriteString("Tables show the median of the repetitions and, after ±, its spread as a share of it: the larger side of the 95% confidence interval of the median with 6 repetitions or more, of the range (min to max) with fewer; charts draw the same interval as error bars. Every ratio of two cells, in a table or a goal, is the Hodges-Lehmann estimate of their ratio: from every pairwise ratio of their repetitions, or, where the servers took turns a round at a time, from the rounds' ratios (\"n=… paired\"). A table's ratio is followed by its test of no difference, \"(p=… n=…)\": a Mann-Whitney U test of the repetitions as benchstat prints it, or, paired, a Wilcoxon signed-rank test of the rounds' ratios; \"~\" marks a difference it does not find significant at α = 0.05. A goal's ratio is followed by its one-sided 95% confidence bound (exact, from the same ratios): a goal is met when that bound lies on the goal's side of its limit in every cell it names, not met when the other bound lies beyond it in a cell after Holm's correction over the cells and limits tested, and otherwise not decided; a cell it names that was not measured or not judged leaves it not decided.\n\n")
	if len(d.Measurements) > 1 {
		p.md.WriteString("Cells of different results files are related only when they were measured in turns in one run (one build action) on one host; otherwise their ratio and goal read \"—\" and say why.\n\n")
	}
}

// measurementsTable has a row per results file that records where it came
// from: when it was measured, the digests of the measuring binary and the
// server, and the runtime settings. A cached result is the first
// measurement of its inputs, so the cells of one table may come from
// different times; this says which.
func measurementsTable(envs []schema.Environment) Table {
	t := Table{Header: []string{"Server", "Load generator", "Measured at", "Measuring binary", "Server binary", "Runtime settings"}}
	for _, e := range envs {
		if e.MeasuredAt == "" {
			continue
		}
		// The Lisp client is recorded as client "lisp", with its binary's
		// digest; grpc-go in the measuring binary is known by its Go version.
		client := "Go (" + e.GoVersion + ")"
		if e.Extra[schema.ExtraClient] == "lisp" {
			client = "Lisp (" + e.SBCLVersion + ")"
			if d := e.Extra[schema.ExtraClientSHA256]; d != "" {
				client = "Lisp (" + e.SBCLVersion + ", " + shortDigest(d) + ")"
			}
		}
		t.Rows = append(t.Rows, []string{
			orMissing(e.Extra[schema.ExtraServer]), client, e.MeasuredAt,
			orMissing(shortDigest(e.Extra[schema.ExtraBinarySHA256])),
			orMissing(shortDigest(e.Extra[schema.ExtraServerSHA256])),
			runtimeSettings(e.Extra, ""),
		})
		// A second server measured in the same run, in turns with the
		// first: same time, same load generator.
		if rival := e.Extra[schema.ExtraRivalPrefix+schema.ExtraServer]; rival != "" {
			t.Rows = append(t.Rows, []string{
				rival + " (in turns with the row above)", client, e.MeasuredAt,
				orMissing(shortDigest(e.Extra[schema.ExtraBinarySHA256])),
				orMissing(shortDigest(e.Extra[schema.ExtraRivalPrefix+schema.ExtraServerSHA256])),
				runtimeSettings(e.Extra, schema.ExtraRivalPrefix),
			})
		}
		// Further servers measured in the same turns: a server's binary
		// with arguments of its own (a tuned variant).
		for _, prefix := range variantPrefixes(e.Extra) {
			t.Rows = append(t.Rows, []string{
				e.Extra[prefix+schema.ExtraServer] + " (in turns with the rows above)", client, e.MeasuredAt,
				orMissing(shortDigest(e.Extra[schema.ExtraBinarySHA256])),
				orMissing(shortDigest(e.Extra[prefix+schema.ExtraServerSHA256])),
				runtimeSettings(e.Extra, prefix),
			})
		}
	}
	return t
}

// variantPrefixes are the "variant_LABEL_" prefixes of the servers an
// environment records beside the first and its rival, in label order.
func variantPrefixes(extra map[string]string) []string {
	var out []string
	for k := range extra {
		if strings.HasPrefix(k, schema.ExtraVariantPrefix) && strings.HasSuffix(k, "_"+schema.ExtraServer) {
			out = append(out, strings.TrimSuffix(k, schema.ExtraServer))
		}
	}
	slices.Sort(out)
	return out
}

// runtimeSettings says how the peers' runtimes were set: the measuring
// process's GOGC, the server's environment and any tuning arguments, those
// of the server whose Extra keys start with prefix ("", the rival's or a
// variant's). Every server of a run inherits the same environment.
func runtimeSettings(extra map[string]string, prefix string) string {
	var settings []string
	if g := extra[schema.ExtraGOGC]; g != "" {
		settings = append(settings, "GOGC "+g)
	}
	if s := extra[schema.ExtraServerRuntime]; s != "" {
		settings = append(settings, "server: "+s)
	}
	if a := extra[prefix+schema.ExtraServerArgs]; a != "" {
		settings = append(settings, "server started with "+a+" (tuned)")
	}
	return orMissing(strings.Join(settings, "; "))
}

func orMissing(s string) string {
	if s == "" {
		return missing
	}
	return s
}

// shortDigest is the first 12 hex digits of a digest, as git abbreviates.
func shortDigest(d string) string { return d[:min(len(d), 12)] }

// writeFailures lists failed scenarios, which tables only mark "error".
func writeFailures(md *strings.Builder, d *Dataset) {
	t := Table{Header: []string{"Scenario", "Error"}}
	for _, r := range d.Rows {
		if r.Status == schema.StatusError {
			t.Rows = append(t.Rows, []string{r.Scenario, r.Error})
		}
	}
	if len(t.Rows) > 0 {
		md.WriteString("### Failed scenarios\n\n" + t.Markdown() + "\n")
	}
}
