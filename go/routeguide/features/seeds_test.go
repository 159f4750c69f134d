package features

import (
	"bytes"
	"testing"

	"github.com/grpcbench/grpcbench/internal/fuzzseed"
)

// TestFuzzSeeds keeps FuzzParse's checked-in corpus: a few features of
// the standard database in both layouts, and databases Parse must refuse.
func TestFuzzSeeds(t *testing.T) {
	standard := defaultJSON
	var seeds [][]any
	for _, s := range []string{
		string(standard[:bytes.Index(standard, []byte("\n    },"))+len("\n    }")]) + "\n  ]\n}\n", // the first feature
		`[{"location": {"latitude": 407838351, "longitude": -746143763}, "name": "Patriots Path"}, {"location": {"latitude": 0, "longitude": 0}, "name": ""}]`,
		`{"feature": [{"location": {"latitude": 900000000, "longitude": 1800000000}}]}`,
		`{"feature": [{"location": {"latitude": 900000001, "longitude": 0}, "name": "beyond a pole"}]}`,
		`[{"location": {"latitude": 1, "longitude": 2}}, {"location": {"latitude": 1, "longitude": 2}}]`,
		`{"feature": [{"name": "nowhere"}]}`,
		`{"feature": []}`,
		`{"Feature": [{"Location": {"Latitude": 1, "Longitude": 2}, "NAME": "any case"}]} `,
		`{"feature": [{"location": {"latitude": 1, "longitude": 2}, "name": "x", "extra": 1}]}`,
		`[{"location": {"latitude": 1, "longitude": 2}}] []`,
		`[{"location": {"latitude": 2147483648, "longitude": 0}}]`,
		"[{\"location\": {\"latitude\": 1, \"longitude\": 2}, \"name\": \"\xff\"}]",
	} {
		seeds = append(seeds, []any{[]byte(s)})
	}
	fuzzseed.Check(t, "FuzzParse", seeds...)
}
