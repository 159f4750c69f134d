package report

// Scaling renders ScalingTable for a metric as X (client count) grows,
// one row per value of Series (implementation), per group.
type Scaling struct {
	Title   string
	GroupBy []string
	Series  string
	X       string
	XNoun   string // header noun, default "clients"
	Metric  string
	Names   map[string]string
}

func (s Scaling) Render(d *Dataset, p *Page) {
	if len(d.Values(s.X)) < 2 {
		return
	}
	noun := s.XNoun
	if noun == "" {
		noun = "clients"
	}
	titled(p, s.Title)
	for _, g := range d.GroupBy(s.GroupBy) {
		var series []Series
		names := g.Data.Values(s.Series)
		if len(names) == 0 {
			names = []string{""}
		}
		for _, n := range names {
			sd := g.Data
			if n != "" {
				sd = g.Data.Where(s.Series, n)
			}
			ser := Series{Name: displayName(s.Names, n)}
			if ser.Name == "" {
				ser.Name = MetricLabel(s.Metric)
			}
			for _, x := range sd.Values(s.X) {
				row, _ := sd.Find(map[string]string{s.X: x})
				xv, err := parseFloat(x)
				v, ok := row.Value(s.Metric)
				if err != nil || !ok {
					continue
				}
				ser.X, ser.Y = append(ser.X, xv), append(ser.Y, v)
			}
			series = append(series, ser)
		}
		header := MetricLabel(s.Series)
		if s.Series == "" {
			header = "Metric"
		}
		groupHeading(p, g)
		p.Table(ScalingTable(header, noun, series))
	}
}
