// Package features holds the RouteGuide feature database: named places at
// E7 latitude/longitude points. The standard 100-feature database is
// embedded so the server and the demo client work with no files on disk; a
// different database can be loaded from JSON in the same format.
//
// The package deliberately does not depend on the generated protobuf types:
// it is plain data, and the service layer converts to wire messages.
package features

import (
	"cmp"
	"iter"
)

// Coordinate bounds in the E7 representation (degrees * 1e7), inclusive.
const (
	MaxLatitude  = 90 * 1e7
	MaxLongitude = 180 * 1e7
)

// Point is a latitude/longitude pair in E7 representation.
type Point struct {
	Latitude  int32
	Longitude int32
}

// Valid reports whether p lies within the legal latitude/longitude ranges.
func (p Point) Valid() bool {
	return p.Latitude >= -MaxLatitude && p.Latitude <= MaxLatitude &&
		p.Longitude >= -MaxLongitude && p.Longitude <= MaxLongitude
}

// Feature names something at a point. An empty Name means the database knows
// the location but has no name for it, which clients treat as "no feature".
type Feature struct {
	Name     string
	Location Point
}

// Rect is an inclusive latitude/longitude rectangle. Lo and Hi may be any two
// diagonally opposite corners; Normalize orders them.
type Rect struct {
	Lo, Hi Point
}

// Normalize returns r with Lo holding the minimum and Hi the maximum of each
// coordinate, so callers may pass corners in either order.
func (r Rect) Normalize() Rect {
	return Rect{
		Lo: Point{min(r.Lo.Latitude, r.Hi.Latitude), min(r.Lo.Longitude, r.Hi.Longitude)},
		Hi: Point{max(r.Lo.Latitude, r.Hi.Latitude), max(r.Lo.Longitude, r.Hi.Longitude)},
	}
}

// Contains reports whether p lies inside r (edges included). r must be
// normalized.
func (r Rect) Contains(p Point) bool {
	return between(p.Latitude, r.Lo.Latitude, r.Hi.Latitude) &&
		between(p.Longitude, r.Lo.Longitude, r.Hi.Longitude)
}

func between[T cmp.Ordered](v, lo, hi T) bool { return v >= lo && v <= hi }

// DB is an immutable feature database, safe for concurrent use.
type DB struct {
	features []Feature     // in file order, so iteration is deterministic
	byPoint  map[Point]int // index into features; points are unique
}

// Len returns the number of features, named or not.
func (db *DB) Len() int { return len(db.features) }

// Lookup returns the feature at p, if the database has one.
func (db *DB) Lookup(p Point) (Feature, bool) {
	i, ok := db.byPoint[p]
	if !ok {
		return Feature{}, false
	}
	return db.features[i], true
}

// All yields every feature in file order.
func (db *DB) All() iter.Seq[Feature] {
	return func(yield func(Feature) bool) {
		for _, f := range db.features {
			if !yield(f) {
				return
			}
		}
	}
}

// Within yields, in file order, the features inside r (normalized first, so
// the corner order does not matter).
func (db *DB) Within(r Rect) iter.Seq[Feature] {
	r = r.Normalize()
	return func(yield func(Feature) bool) {
		// A linear scan is fine: the database is small, and a spatial
		// index would only matter for databases far larger than a
		// benchmark fixture.
		for _, f := range db.features {
			if r.Contains(f.Location) && !yield(f) {
				return
			}
		}
	}
}
