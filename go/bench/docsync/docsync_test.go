package docsync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The report's routeguide test data, as a document's artifact.
const artifact = "../suites/testdata/routeguide_go.json"

func writeDoc(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(artifact)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "DOC.md")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const stale = "# Doc\n\nBefore.\n\n<!-- benchreport: results.json, section: Throughput -->\n| stale | table |\n<!-- /benchreport -->\n\nAfter.\n"

// A part that differs from its artifact is reported; Fix rewrites it, and
// only it, after which the document checks clean and a second Fix changes
// nothing.
func TestCheckAndFix(t *testing.T) {
	path := writeDoc(t, stale)
	problems, err := Check(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], `section "Throughput" differs`) {
		t.Fatalf("problems %q", problems)
	}
	changed, err := Fix(path)
	if err != nil || !changed {
		t.Fatalf("Fix: %v, changed %v", err, changed)
	}
	b, _ := os.ReadFile(path)
	doc := string(b)
	if !strings.HasPrefix(doc, "# Doc\n\nBefore.\n\n<!-- benchreport: results.json, section: Throughput -->\n") ||
		!strings.HasSuffix(doc, "\n<!-- /benchreport -->\n\nAfter.\n") || strings.Contains(doc, "stale") || !strings.Contains(doc, "req/s") {
		t.Errorf("fixed document:\n%s", doc)
	}
	if problems, err := Check(path); err != nil || len(problems) != 0 {
		t.Errorf("after Fix: %v %q", err, problems)
	}
	if changed, err := Fix(path); err != nil || changed {
		t.Errorf("second Fix: %v, changed %v", err, changed)
	}
}

// An empty part is filled in, and the marker after it kept.
func TestFixFillsAnEmptyPart(t *testing.T) {
	path := writeDoc(t, "<!-- benchreport: results.json, section: Throughput -->\n<!-- /benchreport -->\nEnd.\n")
	if _, err := Fix(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if doc := string(b); !strings.HasSuffix(doc, "\n<!-- /benchreport -->\nEnd.\n") || !strings.Contains(doc, "req/s") {
		t.Errorf("document:\n%s", doc)
	}
}

// A section the report does not have, a missing artifact and an unclosed
// part are errors that name the document's line.
func TestErrors(t *testing.T) {
	for body, want := range map[string]string{
		"<!-- benchreport: results.json, section: No such section -->\n<!-- /benchreport -->\n": `no section "No such section"`,
		"x\n<!-- benchreport: missing.json, section: Throughput -->\n<!-- /benchreport -->\n":   "DOC.md:2:",
		"<!-- benchreport: results.json, section: Throughput -->\nno end\n":                     "no <!-- /benchreport -->",
		"<!-- benchreport: results.json section: Throughput -->\n<!-- /benchreport -->\n":       "DOC.md:1: a benchreport marker",
		"<!-- benchreport: results.json, section: Throughput -->\r\n<!-- /benchreport -->\r\n":  "DOC.md:1: a benchreport marker",
		"# Doc\n\nNo generated part.\n": "no generated part",
	} {
		if _, err := Check(writeDoc(t, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", body, err, want)
		}
	}
}
