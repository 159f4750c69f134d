package report

// VariantComparison compares the values of one parameter (the variants,
// e.g. method=list|stream) within each group of the others, metrics as
// rows: ComparisonTable per group. GroupBy must name every other parameter
// that varies, or a group holds several scenarios per variant and the first
// is shown.
type VariantComparison struct {
	Title      string
	GroupBy    []string
	Variant    string
	Order      []string          // variant values first in this order; others follow
	Names      map[string]string // display names of variant values ("stream": "Stream")
	Metrics    []MetricView      // default: every metric
	SameWithin float64           // default DefaultSameWithin
}

func (s VariantComparison) Render(d *Dataset, p *Page) {
	variants := ordered(d.Values(s.Variant), s.Order)
	if len(variants) < 2 {
		return
	}
	same := s.SameWithin
	if same == 0 {
		same = DefaultSameWithin
	}
	titled(p, s.Title)
	for _, g := range d.GroupBy(s.GroupBy) {
		var cols []Column
		for _, v := range variants {
			if r, ok := g.Data.Find(map[string]string{s.Variant: v}); ok {
				cols = append(cols, Column{Name: variantName(s.Names, s.Variant, v), Row: &r})
			}
		}
		if len(cols) < 2 {
			continue
		}
		groupHeading(p, g)
		p.Table(ComparisonTable(viewsOrAll(g.Data, s.Metrics), cols, same))
	}
}
