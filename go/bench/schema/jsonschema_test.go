package schema

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// results.schema.json documents the format for other languages (the Lisp
// client writes these files too); this keeps it in step with the Go code.
func TestJSONSchemaMatchesGoDefinition(t *testing.T) {
	data, err := os.ReadFile("results.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Draft      string `json:"$schema"`
		Properties struct {
			Schema struct {
				Const string `json:"const"`
			} `json:"schema"`
		} `json:"properties"`
		Defs struct {
			Metric struct {
				Required   []string `json:"required"`
				Properties struct {
					Unit struct {
						Enum []string `json:"enum"`
					} `json:"unit"`
				} `json:"properties"`
			} `json:"metric"`
			Environment struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"environment"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("results.schema.json: %v", err)
	}
	if doc.Draft != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %q, want draft 2020-12", doc.Draft)
	}
	if doc.Properties.Schema.Const != Version {
		t.Errorf("schema const = %q, want %q", doc.Properties.Schema.Const, Version)
	}
	units := doc.Defs.Metric.Properties.Unit.Enum
	for _, u := range units {
		if !KnownUnit(u) {
			t.Errorf("unit %q in JSON Schema is not a KnownUnit", u)
		}
	}
	if len(units) != len(knownUnits) {
		t.Errorf("JSON Schema lists %d units, Go knows %d", len(units), len(knownUnits))
	}
	for _, k := range []string{"name", "unit", "better", "reps", "min", "median", "max"} {
		if !slices.Contains(doc.Defs.Metric.Required, k) {
			t.Errorf("metric.required lacks %q", k)
		}
	}
	for _, k := range []string{"cpu_model", "cpu_count", "kernel", "go_version", "platform", "build_config"} {
		if !slices.Contains(doc.Defs.Environment.Required, k) {
			t.Errorf("environment.required lacks %q", k)
		}
	}
	// The schema admits no other property, so every field Go writes must be listed.
	env := reflect.TypeFor[Environment]()
	for i := range env.NumField() {
		key, _, _ := strings.Cut(env.Field(i).Tag.Get("json"), ",")
		if _, ok := doc.Defs.Environment.Properties[key]; !ok {
			t.Errorf("environment.properties lacks %q, which Environment.%s writes", key, env.Field(i).Name)
		}
	}
}
