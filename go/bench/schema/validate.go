package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ValidationError lists every problem found in a results file, each prefixed
// with the JSON path it concerns, so that one run of the validator tells the
// author everything to fix.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	return "invalid results file:\n  " + strings.Join(e.Problems, "\n  ")
}

var (
	suitePattern      = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	metricNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	platformPattern   = regexp.MustCompile(`^[a-z0-9]+_[a-z0-9]+$`)
	scenarioPattern   = regexp.MustCompile(`^\S+$`)
)

// Validate checks that data is a well-formed results file of this schema
// version. It returns nil or a *ValidationError.
func Validate(data []byte) error {
	_, err := Parse(data)
	return err
}

// Parse validates data and decodes it. On failure the returned error is a
// *ValidationError and the file is nil.
func Parse(data []byte) (*File, error) {
	v := &validator{}

	// The generic decode sees which keys are present (a missing "min" and a
	// zero "min" decode alike into the struct) and which are unknown (usually
	// typos); the typed decode checks the values' types.
	var generic any
	if err := decodeOne(data, &generic); err != nil {
		v.addf("$: not JSON: %v", err)
		return nil, v.err()
	}
	root, ok := generic.(map[string]any)
	if !ok {
		v.addf("$: must be a JSON object")
		return nil, v.err()
	}
	if s, _ := root["schema"].(string); s != Version {
		// Nothing else is meaningful under another version.
		v.addf("schema: got %q, want %q", root["schema"], Version)
		return nil, v.err()
	}
	var f File
	if err := decodeOne(data, &f); err != nil {
		v.addf("$: %v", err)
		return nil, v.err()
	}
	v.checkKeys(root)
	v.checkFile(&f)
	if err := v.err(); err != nil {
		return nil, err
	}
	return &f, nil
}

func decodeOne(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(into); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the top-level value")
	}
	return nil
}

type validator struct {
	problems []string
	missing  map[string]bool // paths reported as required, not to be reported again
}

func (v *validator) addf(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.problems}
}

// checkKeys reports required keys that are absent and keys the schema does
// not define. Types were already checked by the typed decode.
func (v *validator) checkKeys(root map[string]any) {
	v.require(root, "$", "suite", "environment", "results")
	v.known(root, "$", fileKeys)
	if env, ok := root["environment"].(map[string]any); ok {
		v.require(env, "environment", "cpu_model", "cpu_count", "kernel", "go_version", "platform", "build_config")
		v.known(env, "environment", environmentKeys)
	}
	results, _ := root["results"].([]any)
	for i, r := range results {
		res, ok := r.(map[string]any)
		if !ok {
			continue
		}
		path := fmt.Sprintf("results[%d]", i)
		v.require(res, path, "scenario", "status")
		v.known(res, path, resultKeys)
		metrics, _ := res["metrics"].([]any)
		for j, m := range metrics {
			if met, ok := m.(map[string]any); ok {
				mpath := fmt.Sprintf("%s.metrics[%d]", path, j)
				v.require(met, mpath, "name", "unit", "better", "reps", "min", "median", "max")
				v.known(met, mpath, metricKeys)
			}
		}
	}
}

// The keys each object may have, taken from the Go types' json tags so the
// two cannot drift apart.
var (
	fileKeys        = jsonKeys(reflect.TypeFor[File]())
	environmentKeys = jsonKeys(reflect.TypeFor[Environment]())
	resultKeys      = jsonKeys(reflect.TypeFor[Result]())
	metricKeys      = jsonKeys(reflect.TypeFor[Metric]())
)

func jsonKeys(t reflect.Type) map[string]bool {
	keys := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	return keys
}

func (v *validator) known(obj map[string]any, path string, allowed map[string]bool) {
	var unknown []string
	for k := range obj {
		if !allowed[k] {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown) // map order is random; problems must not be
	for _, k := range unknown {
		v.addf("%s.%s: unknown field", path, k)
	}
}

func (v *validator) require(obj map[string]any, path string, keys ...string) {
	for _, k := range keys {
		if val, ok := obj[k]; !ok || val == nil || val == "" {
			v.addf("%s.%s: required", path, k)
			if v.missing == nil {
				v.missing = map[string]bool{}
			}
			v.missing[path+"."+k] = true
		}
	}
}

func (v *validator) checkFile(f *File) {
	if f.Suite != "" && !suitePattern.MatchString(f.Suite) {
		v.addf("suite: %q must match %s", f.Suite, suitePattern)
	}
	v.checkEnvironment(&f.Environment)
	if f.Results == nil {
		return // reported by checkPresence
	}
	if len(f.Results) == 0 {
		v.addf("results: must not be empty")
	}
	seen := map[string]int{}
	for i := range f.Results {
		r := &f.Results[i]
		path := fmt.Sprintf("results[%d]", i)
		if first, dup := seen[r.Scenario]; dup && r.Scenario != "" {
			v.addf("%s.scenario: %q duplicates results[%d]", path, r.Scenario, first)
		} else {
			seen[r.Scenario] = i
		}
		v.checkResult(path, r)
	}
}

func (v *validator) checkEnvironment(e *Environment) {
	if e.CPUCount <= 0 && !v.missing["environment.cpu_count"] {
		v.addf("environment.cpu_count: must be positive, got %d", e.CPUCount)
	}
	if e.GOMAXPROCS < 0 {
		v.addf("environment.gomaxprocs: must not be negative, got %d", e.GOMAXPROCS)
	}
	if e.MemoryBytes < 0 {
		v.addf("environment.memory_bytes: must not be negative, got %d", e.MemoryBytes)
	}
	if e.Platform != "" && !platformPattern.MatchString(e.Platform) {
		v.addf("environment.platform: %q must look like linux_amd64", e.Platform)
	}
	if e.MeasuredAt != "" {
		if _, err := time.Parse(time.RFC3339, e.MeasuredAt); err != nil {
			v.addf("environment.measured_at: %q is not an RFC 3339 time", e.MeasuredAt)
		}
	}
}

func (v *validator) checkResult(path string, r *Result) {
	if r.Scenario != "" && !scenarioPattern.MatchString(r.Scenario) {
		v.addf("%s.scenario: %q must not contain whitespace", path, r.Scenario)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Parameters)) {
		switch val := r.Parameters[k]; val.(type) {
		case string, float64, bool:
		default:
			v.addf("%s.parameters.%s: must be a string, number or bool, got %s", path, k, jsonKind(val))
		}
	}
	switch r.Status {
	case StatusOK:
		if len(r.Metrics) == 0 {
			v.addf("%s.metrics: a scenario with status \"ok\" needs at least one metric", path)
		}
	case StatusError:
		if strings.TrimSpace(r.Error) == "" {
			v.addf("%s.error: required when status is \"error\"", path)
		}
	case "":
		// Reported as missing.
	default:
		v.addf("%s.status: %q is not \"ok\" or \"error\"", path, r.Status)
	}
	names := map[string]bool{}
	reps := -1
	for j := range r.Metrics {
		m := &r.Metrics[j]
		mpath := fmt.Sprintf("%s.metrics[%d]", path, j)
		if names[m.Name] {
			v.addf("%s.name: %q appears twice", mpath, m.Name)
		}
		names[m.Name] = true
		v.checkMetric(mpath, m)
		// Every metric's reps[i] comes from repetition i; that lets tools
		// rebuild one Go benchmark line per repetition.
		if reps >= 0 && len(m.Reps) != reps && len(m.Reps) > 0 {
			v.addf("%s.reps: has %d values, other metrics of this scenario have %d", mpath, len(m.Reps), reps)
		} else if reps < 0 && len(m.Reps) > 0 {
			reps = len(m.Reps)
		}
	}
}

func (v *validator) checkMetric(path string, m *Metric) {
	if m.Name != "" && !metricNamePattern.MatchString(m.Name) {
		v.addf("%s.name: %q must match %s", path, m.Name, metricNamePattern)
	}
	if m.Unit != "" && !KnownUnit(m.Unit) {
		v.addf("%s.unit: %q is not a known unit (s, ns, ns/op, req/s, msg/s, B/op, allocs/op, ratio, count)", path, m.Unit)
	}
	if m.Better != "" && m.Better != HigherIsBetter && m.Better != LowerIsBetter {
		v.addf("%s.better: %q is not \"higher\" or \"lower\"", path, m.Better)
	}
	if m.Reps == nil {
		return // reported as missing
	}
	if len(m.Reps) == 0 {
		v.addf("%s.reps: must not be empty", path)
		return
	}
	for k, x := range m.Reps {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			v.addf("%s.reps[%d]: must be finite", path, k)
			return
		}
		if x < 0 {
			// Every unit above measures a magnitude.
			v.addf("%s.reps[%d]: must not be negative, got %g", path, k, x)
		}
	}
	if v.missing[path+".min"] || v.missing[path+".median"] || v.missing[path+".max"] {
		return
	}
	if !(m.Min <= m.Median && m.Median <= m.Max) {
		v.addf("%s: need min <= median <= max, got %g, %g, %g", path, m.Min, m.Median, m.Max)
		return
	}
	lo, med, hi := summarize(m.Reps)
	for _, c := range []struct {
		field     string
		got, want float64
	}{{"min", m.Min, lo}, {"median", m.Median, med}, {"max", m.Max, hi}} {
		if !approxEqual(c.got, c.want) {
			v.addf("%s.%s: %g does not match reps (want %g)", path, c.field, c.got, c.want)
		}
	}
}

func jsonKind(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", x)
}
