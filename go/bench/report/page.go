package report

import (
	"fmt"
	"regexp"
	"strings"
)

// Page collects what sections render: Markdown text and the charts it
// refers to. Custom sections (SectionFunc) write to it too.
type Page struct {
	md         strings.Builder
	charts     []ChartFile
	chartNames map[string]bool
	namePrefix string
	drawCharts bool
	items      int // tables and charts written; 0 means the layout fit nothing
	pending    []string
}

// ChartFile is a rendered chart the Markdown links to by Name.
type ChartFile struct {
	Name string // e.g. "routeguide-req-s-by-clients-impl-go.svg"
	SVG  []byte
}

// Heading writes a Markdown heading of the given level (1-6).
func (p *Page) Heading(level int, text string) {
	p.flush()
	fmt.Fprintf(&p.md, "%s %s\n\n", strings.Repeat("#", level), text)
}

// PendingHeading queues a heading that is written only if a table or chart
// follows, so a section or group that turns out empty leaves no title.
// A heading of the same or a higher level drops queued deeper ones.
func (p *Page) PendingHeading(level int, text string) {
	h := strings.Repeat("#", level) + " " + text
	for len(p.pending) > 0 && headingLevel(p.pending[len(p.pending)-1]) >= level {
		p.pending = p.pending[:len(p.pending)-1]
	}
	p.pending = append(p.pending, h)
}

func headingLevel(h string) int { return len(h) - len(strings.TrimLeft(h, "#")) }

func (p *Page) flush() {
	for _, h := range p.pending {
		p.md.WriteString(h + "\n\n")
	}
	p.pending = p.pending[:0]
}

// Text writes a paragraph.
func (p *Page) Text(text string) {
	p.flush()
	p.md.WriteString(text + "\n\n")
}

// Table writes a table; an empty one is skipped.
func (p *Page) Table(t Table) {
	if len(t.Rows) == 0 {
		return
	}
	p.flush()
	p.md.WriteString(t.Markdown() + "\n")
	p.items++
}

// Chart adds a chart file and an image link to it. When the report is for
// a terminal (no chart files), it is left out.
func (p *Page) Chart(c Chart) {
	if !p.drawCharts || len(c.Series) == 0 || len(c.Categories) == 0 {
		return
	}
	p.flush()
	name := p.uniqueName(p.namePrefix + "-" + slug(c.Title))
	p.charts = append(p.charts, ChartFile{Name: name, SVG: c.SVG()})
	fmt.Fprintf(&p.md, "![%s](%s)\n\n", c.Title, name)
	p.items++
}

func (p *Page) uniqueName(base string) string {
	if p.chartNames == nil {
		p.chartNames = map[string]bool{}
	}
	name := base + ".svg"
	for i := 2; p.chartNames[name]; i++ {
		name = fmt.Sprintf("%s-%d.svg", base, i)
	}
	p.chartNames[name] = true
	return name
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	s = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if s == "" {
		return "chart"
	}
	return s
}
