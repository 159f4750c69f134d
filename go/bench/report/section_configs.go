package report

import (
	"slices"
	"strings"
)

// AllConfigurations compares every configuration of a group with the
// first, metrics as rows, each later cell with its change from the first
// ("**50.1 ms** (-24%)"). Where VariantComparison varies one parameter
// within groups of the others, this varies several at once (a method and
// the chunk size only some methods have), so that one table holds List,
// Stream and every chunk size, as the "Stream vs List (all
// configurations)" table of docs/prior-results.md does.
type AllConfigurations struct {
	Title   string
	GroupBy []string
	// Vary are the parameters whose combinations make the columns, the
	// first one leading (e.g. method, per_chunk). A scenario that lacks
	// one of them is a column without it.
	Vary       []string
	Order      []string          // values of Vary[0] first in this order, the baseline first of all
	Names      map[string]string // display names of Vary[0]'s values
	Metrics    []MetricView      // default: every metric
	SameWithin float64           // default DefaultSameWithin
}

func (s AllConfigurations) Render(d *Dataset, p *Page) {
	if len(s.Vary) == 0 {
		return
	}
	same := s.SameWithin
	if same == 0 {
		same = DefaultSameWithin
	}
	var tables []Group
	var cols [][]Column
	for _, g := range d.GroupBy(s.GroupBy) {
		if c := s.columns(g.Data); len(c) > 2 {
			tables, cols = append(tables, g), append(cols, c)
		}
	}
	// Two configurations are what VariantComparison shows already; this
	// section is for the overview of three and more.
	if len(tables) == 0 {
		return
	}
	titled(p, s.Title)
	for i, g := range tables {
		groupHeading(p, g)
		p.Table(ComparisonTable(viewsOrAll(g.Data, s.Metrics), cols[i], same))
	}
}

// columns returns one column per distinct configuration of d: Vary[0] in
// Order, then the other Vary parameters in ascending order.
func (s AllConfigurations) columns(d *Dataset) []Column {
	lead := ordered(d.Values(s.Vary[0]), s.Order)
	rank := func(r Row) []int {
		key := []int{slices.Index(lead, r.Param(s.Vary[0]))}
		for _, k := range s.Vary[1:] {
			// A scenario without the parameter comes first (index -1).
			key = append(key, slices.Index(d.Values(k), r.Param(k)))
		}
		return key
	}
	var rows []Row
	seen := map[string]bool{}
	for _, r := range d.Rows {
		if id := s.configID(r); !seen[id] && r.Param(s.Vary[0]) != "" {
			seen[id] = true
			rows = append(rows, r)
		}
	}
	slices.SortStableFunc(rows, func(a, b Row) int { return slices.Compare(rank(a), rank(b)) })
	cols := make([]Column, len(rows))
	for i := range rows {
		cols[i] = Column{Name: s.columnName(rows[i]), Row: &rows[i]}
	}
	return cols
}

// configID identifies a scenario's configuration by its Vary parameters.
func (s AllConfigurations) configID(r Row) string {
	parts := make([]string, len(s.Vary))
	for i, k := range s.Vary {
		parts[i] = k + "=" + r.Param(k)
	}
	return strings.Join(parts, ",")
}

// columnName is the display name of Vary[0]'s value followed by the other
// parameters the scenario sets: "Chunked stream, per_chunk=16".
func (s AllConfigurations) columnName(r Row) string {
	name := displayName(s.Names, r.Param(s.Vary[0]))
	for _, k := range s.Vary[1:] {
		if v := r.Param(k); v != "" {
			name += ", " + k + "=" + v
		}
	}
	return name
}
