package features

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// defaultJSON is the standard RouteGuide database from the gRPC examples.
//
//go:embed route_guide_db.json
var defaultJSON []byte

// Default returns the embedded database. It is parsed once and shared; the
// package test guarantees the embedded file parses, so a failure here is a
// build defect and panics.
var Default = sync.OnceValue(func() *DB {
	db, err := Parse(defaultJSON)
	if err != nil {
		panic("features: embedded route_guide_db.json: " + err.Error())
	}
	return db
})

// Load reads a database from a JSON file (see Parse for the format).
func Load(path string) (*DB, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	db, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return db, nil
}

// jsonFeature mirrors the JSON form of the routeguide.Feature message.
type jsonFeature struct {
	Name     string `json:"name"`
	Location *struct {
		Latitude  int32 `json:"latitude"`
		Longitude int32 `json:"longitude"`
	} `json:"location"`
}

// Parse decodes a database. Two layouts are accepted because both circulate
// in the gRPC examples: an object {"feature": [...]} (the JSON form of a
// repeated Feature field) and a bare array [...] of features. Each feature is
// {"location": {"latitude": N, "longitude": N}, "name": "..."}.
//
// Parse rejects unknown fields, missing or out-of-range locations and two
// features at one point, since any of those would make lookups ambiguous or
// silently wrong.
func Parse(data []byte) (*DB, error) {
	var list []jsonFeature
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		if err := strictDecode(data, &list); err != nil {
			return nil, err
		}
	} else {
		var wrapped struct {
			Feature []jsonFeature `json:"feature"`
		}
		if err := strictDecode(data, &wrapped); err != nil {
			return nil, err
		}
		list = wrapped.Feature
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("feature database is empty")
	}

	db := &DB{
		features: make([]Feature, 0, len(list)),
		byPoint:  make(map[Point]int, len(list)),
	}
	for i, jf := range list {
		if jf.Location == nil {
			return nil, fmt.Errorf("feature %d (%q): missing location", i, jf.Name)
		}
		f := Feature{Name: jf.Name, Location: Point{jf.Location.Latitude, jf.Location.Longitude}}
		if !f.Location.Valid() {
			return nil, fmt.Errorf("feature %d (%q): location %v out of range", i, f.Name, f.Location)
		}
		if j, dup := db.byPoint[f.Location]; dup {
			return nil, fmt.Errorf("feature %d (%q): same location as feature %d", i, f.Name, j)
		}
		db.byPoint[f.Location] = len(db.features)
		db.features = append(db.features, f)
	}
	return db, nil
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decoding feature database: %w", err)
	}
	// More is false at a closing bracket, which Token refuses.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("decoding feature database: trailing data after JSON value")
	}
	return nil
}
