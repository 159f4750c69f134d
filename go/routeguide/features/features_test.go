package features

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultDatabase(t *testing.T) {
	db := Default()
	if got := db.Len(); got != 100 {
		t.Fatalf("Len() = %d, want 100", got)
	}
	named := 0
	for f := range db.All() {
		if f.Name != "" {
			named++
		}
	}
	if named != 64 {
		t.Errorf("named features = %d, want 64", named)
	}
	if Default() != db {
		t.Error("Default() should return the same shared instance")
	}
}

func TestLookup(t *testing.T) {
	db := Default()
	f, ok := db.Lookup(Point{409146138, -746188906})
	if !ok || f.Name != "Berkshire Valley Management Area Trail, Jefferson, NJ, USA" {
		t.Errorf("Lookup(known) = %+v, %v", f, ok)
	}
	// A location present in the file with an empty name.
	if f, ok := db.Lookup(Point{407113723, -749746483}); !ok || f.Name != "" {
		t.Errorf("Lookup(unnamed) = %+v, %v; want unnamed entry", f, ok)
	}
	if f, ok := db.Lookup(Point{0, 0}); ok {
		t.Errorf("Lookup(0,0) = %+v, want no feature", f)
	}
}

func TestWithin(t *testing.T) {
	db := Default()
	count := func(r Rect) int {
		n := 0
		for f := range db.Within(r) {
			if !r.Normalize().Contains(f.Location) {
				t.Errorf("Within yielded %v outside %v", f.Location, r)
			}
			n++
		}
		return n
	}
	whole := Rect{Point{400000000, -750000000}, Point{420000000, -730000000}}
	if got := count(whole); got != 100 {
		t.Errorf("whole area: %d features, want 100", got)
	}
	south := Rect{Point{400000000, -750000000}, Point{405000000, -740000000}}
	if got := count(south); got != 22 {
		t.Errorf("southern area: %d features, want 22", got)
	}
	// Corners given in the opposite order must select the same features.
	swapped := Rect{Lo: south.Hi, Hi: south.Lo}
	if got := count(swapped); got != 22 {
		t.Errorf("swapped corners: %d features, want 22", got)
	}
	if got := count(Rect{}); got != 0 {
		t.Errorf("empty rect at origin: %d features, want 0", got)
	}
	// Stopping early must not panic or keep yielding.
	for range db.Within(whole) {
		break
	}
}

func TestParseFormats(t *testing.T) {
	const feature = `{"location": {"latitude": 1, "longitude": 2}, "name": "x"}`
	for _, data := range []string{
		`{"feature": [` + feature + `]}`,
		"\n  [" + feature + `]`,
	} {
		db, err := Parse([]byte(data))
		if err != nil {
			t.Fatalf("Parse(%s): %v", data, err)
		}
		if f, ok := db.Lookup(Point{1, 2}); !ok || f.Name != "x" {
			t.Errorf("Parse(%s): Lookup = %+v, %v", data, f, ok)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for name, data := range map[string]string{
		"not json":       `feature`,
		"empty":          `{"feature": []}`,
		"unknown field":  `[{"location": {"latitude": 1, "longitude": 2}, "nam": "x"}]`,
		"no location":    `[{"name": "x"}]`,
		"bad latitude":   `[{"location": {"latitude": 900000001, "longitude": 0}}]`,
		"bad longitude":  `[{"location": {"latitude": 0, "longitude": -1800000001}}]`,
		"int32 overflow": `[{"location": {"latitude": 3000000000, "longitude": 0}}]`,
		"duplicate": `[{"location": {"latitude": 1, "longitude": 2}, "name": "a"},
		               {"location": {"latitude": 1, "longitude": 2}, "name": "b"}]`,
		"trailing data":    `[{"location": {"latitude": 1, "longitude": 2}}] {}`,
		"trailing bracket": `[{"location": {"latitude": 1, "longitude": 2}}]}`,
	} {
		if _, err := Parse([]byte(data)); err == nil {
			t.Errorf("%s: Parse succeeded, want error", name)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "db.json")
	if err := os.WriteFile(good, []byte(`[{"location": {"latitude": 5, "longitude": 6}, "name": "here"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Load(good)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if db.Len() != 1 {
		t.Errorf("Len() = %d, want 1", db.Len())
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("Load(bad) error = %v, want one naming the file", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("Load(missing) succeeded, want error")
	}
}
