package report

import "strings"

// Table is a rendered table: every cell already formatted.
type Table struct {
	Header []string
	Rows   [][]string
}

// Markdown renders t as a GitHub-flavoured Markdown table.
func (t Table) Markdown() string {
	var b strings.Builder
	writeRow := func(cells []string) {
		b.WriteString("|")
		for i := range t.Header {
			cell := ""
			if i < len(cells) {
				cell = cells[i]
			}
			b.WriteString(" " + escapeCell(cell) + " |")
		}
		b.WriteString("\n")
	}
	writeRow(t.Header)
	b.WriteString("|" + strings.Repeat("---|", len(t.Header)) + "\n")
	for _, r := range t.Rows {
		writeRow(r)
	}
	return b.String()
}

// escapeCell keeps a cell on its row: a pipe would start a new cell and a
// newline a new row.
func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// AddColumn appends a column; cells[i] goes to row i.
func (t *Table) AddColumn(header string, cells []string) {
	t.Header = append(t.Header, header)
	for i := range t.Rows {
		cell := ""
		if i < len(cells) {
			cell = cells[i]
		}
		t.Rows[i] = append(t.Rows[i], cell)
	}
}

// missing marks a cell with no measurement.
const missing = "—"
