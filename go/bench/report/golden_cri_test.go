package report

import "testing"

// cri-bench's own results (two runs, 32 and 1024 containers, trimmed to
// the layout's metrics): list, stream and two chunk sizes, so that "Stream
// vs List (all configurations)" has four columns. Only the Markdown is
// checked: the charts have the names of the "cri" case's, which covers them.
func TestRenderCRIChunkedGolden(t *testing.T) {
	r, err := Render(readFiles(t, "cri_chunked_32.json", "cri_chunked_1024.json"), Options{Charts: true})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "cri_chunked.md", []byte(r.Markdown))
}
