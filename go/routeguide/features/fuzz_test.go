package features

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzParse parses arbitrary bytes as a feature database. A database it
// accepts came from JSON, holds at least one feature, each at a valid
// point of its own that Lookup finds; and written back as JSON, in either
// layout, it parses to the same features in the same order. The seeds are
// testdata/fuzz/FuzzParse (TestFuzzSeeds).
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		db, err := Parse(data)
		if err != nil {
			if db != nil {
				t.Fatalf("Parse failed (%v) with a database", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Parse accepted %q, which is not JSON", data)
		}
		features := slices.Collect(db.All())
		if len(features) == 0 || len(features) != db.Len() {
			t.Fatalf("Parse(%q): %d features, Len %d", data, len(features), db.Len())
		}
		for _, f := range features {
			if got, ok := db.Lookup(f.Location); !f.Location.Valid() || !ok || got != f {
				t.Fatalf("Parse(%q): feature %+v, looked up as %+v, %v", data, f, got, ok)
			}
		}
		list := make([]jsonFeature, len(features))
		for i, f := range features {
			list[i].Name = f.Name
			list[i].Location = &struct {
				Latitude  int32 `json:"latitude"`
				Longitude int32 `json:"longitude"`
			}{f.Location.Latitude, f.Location.Longitude}
		}
		for _, v := range []any{list, map[string]any{"feature": list}} {
			again, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(again)
			if err != nil {
				t.Fatalf("Parse accepted %q, and not its re-encoding %q: %v", data, again, err)
			}
			if got := slices.Collect(back.All()); !slices.Equal(got, features) {
				t.Fatalf("%q parsed as %+v, its re-encoding as %+v", data, features, got)
			}
		}
	})
}
