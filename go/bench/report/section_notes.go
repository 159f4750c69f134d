package report

// Notes is a fixed paragraph under a title, for what a suite's tables
// cannot say themselves (how the method differs from an earlier report,
// say). It renders only when the suite has results.
type Notes struct {
	Title string
	Text  []string // paragraphs
}

func (n Notes) Render(d *Dataset, p *Page) {
	if len(d.Rows) == 0 {
		return
	}
	titled(p, n.Title)
	for _, t := range n.Text {
		p.Text(t)
	}
}
