// Package docsync keeps the benchmark figures in the repository's documents
// equal to the results files checked in beside them. A document marks each
// generated part with the artifact it comes from and the report section it
// shows:
//
//	<!-- benchreport: perf/connscale_quick.json, section: Goal: memory -->
//	...the section, as the report renders it...
//	<!-- /benchreport -->
//
// The artifact's path is relative to the document. Check reports every part
// that differs from what the report renders from its artifact today; Fix
// rewrites them. A figure inside such a part therefore always has its
// artifact beside it, and a change to the report's code that changes the
// figure's rendering fails the check until the documents are regenerated.
package docsync

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"

	// Every suite's layout and goals, which the documents render.
	_ "github.com/grpcbench/grpcbench/go/bench/suites"
)

var (
	beginPattern = regexp.MustCompile(`^<!-- benchreport: (\S+), section: (.+?) -->$`)
	endLine      = "<!-- /benchreport -->"
)

// Part is one generated part of a document.
type Part struct {
	Artifact string // as written, relative to the document
	Section  string // the report section's heading
	Line     int    // of its begin marker, 1-based
	end      int    // the index of its end marker's line
	Have     string // what the document holds
	Want     string // what the report renders
}

// Parts finds the generated parts of the document at path and renders what
// each should hold.
func Parts(path string) ([]Part, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	var parts []Part
	reports := map[string]string{} // artifact path -> its rendered report, once each
	for i := 0; i < len(lines); i++ {
		m := beginPattern.FindStringSubmatch(lines[i])
		if m == nil {
			// A marker mistyped (or with a CR after it) would otherwise
			// leave its part unchecked, and the check would pass.
			if strings.HasPrefix(strings.TrimSpace(lines[i]), "<!-- benchreport") || strings.HasPrefix(strings.TrimSpace(lines[i]), "<!-- /benchreport") {
				return nil, fmt.Errorf("%s:%d: a benchreport marker out of place or not of the form %q", path, i+1, "<!-- benchreport: FILE, section: TITLE -->")
			}
			continue
		}
		end := i + 1
		for end < len(lines) && lines[end] != endLine {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: no %s after this part's begin", path, i+1, endLine)
		}
		artifact := filepath.Join(filepath.Dir(path), m[1])
		md, ok := reports[artifact]
		if !ok {
			if md, err = renderReport(artifact); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
			}
			reports[artifact] = md
		}
		want, err := section(md, artifact, m[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		parts = append(parts, Part{Artifact: m[1], Section: m[2], Line: i + 1, end: end,
			Have: strings.Join(lines[i+1:end], "\n"), Want: want})
		i = end
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s: no generated part (<!-- benchreport: FILE, section: TITLE -->) to check", path)
	}
	return parts, nil
}

// Check returns a problem for each generated part of the document at path
// that differs from its artifact's rendering.
func Check(path string) ([]string, error) {
	parts, err := Parts(path)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, p := range parts {
		if p.Have != p.Want {
			problems = append(problems, fmt.Sprintf("%s:%d: section %q differs from what %s renders:\n--- document\n%s\n--- artifact\n%s",
				path, p.Line, p.Section, p.Artifact, p.Have, p.Want))
		}
	}
	return problems, nil
}

// Fix rewrites the generated parts of the document at path from their
// artifacts, and reports whether anything changed.
func Fix(path string) (bool, error) {
	parts, err := Parts(path)
	if err != nil {
		return false, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	lines := strings.Split(string(b), "\n")
	var out []string
	next := 0
	for _, p := range parts {
		begin := p.Line - 1
		out = append(out, lines[next:begin+1]...)
		out = append(out, p.Want)
		next = p.end
	}
	out = append(out, lines[next:]...)
	fixed := []byte(strings.Join(out, "\n"))
	if bytes.Equal(fixed, b) {
		return false, nil
	}
	return true, os.WriteFile(path, fixed, 0o644)
}

// renderReport renders the report of one results file.
func renderReport(artifact string) (string, error) {
	f, err := schema.ReadFile(artifact)
	if err != nil {
		return "", err
	}
	r, err := report.Render([]*schema.File{f}, report.Options{})
	if err != nil {
		return "", err
	}
	return r.Markdown, nil
}

// section returns the body of the section titled title in md, artifact's
// report: the lines under that heading, up to the next heading of the same
// level or above.
func section(md, artifact, title string) (string, error) {
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		level := headingLevel(l)
		if level == 0 || strings.TrimSpace(l[level:]) != title {
			continue
		}
		end := i + 1
		for end < len(lines) && (headingLevel(lines[end]) == 0 || headingLevel(lines[end]) > level) {
			end++
		}
		return strings.Trim(strings.Join(lines[i+1:end], "\n"), "\n"), nil
	}
	return "", fmt.Errorf("%s: its report has no section %q", artifact, title)
}

// headingLevel is the number of #s that start a Markdown heading line, 0
// for another line.
func headingLevel(l string) int {
	n := len(l) - len(strings.TrimLeft(l, "#"))
	if n == 0 || n == len(l) || l[n] != ' ' {
		return 0
	}
	return n
}
