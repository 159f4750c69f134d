package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A valid file marshals to a header line a field and a line a result, and
// reads back the same.
func TestMarshalWritesAResultALine(t *testing.T) {
	for _, path := range validFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data, err := f.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			// {, schema, suite, environment, "results": [, a line per result, ], }
			want := 5 + len(f.Results) + 2
			if len(f.Results) == 0 {
				want = 6
			}
			if len(lines) != want {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), want, data)
			}
			for i, r := range f.Results {
				line := strings.TrimSuffix(strings.TrimSpace(lines[5+i]), ",")
				var got Result
				if err := json.Unmarshal([]byte(line), &got); err != nil {
					t.Fatalf("line %d is not one result: %v", 6+i, err)
				}
				if !reflect.DeepEqual(got, r) {
					t.Errorf("line %d: %+v, want %+v", 6+i, got, r)
				}
			}
			back, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			again, err := back.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, data) {
				t.Errorf("marshalling what was read back changed the file:\n%s\nwas\n%s", again, data)
			}
		})
	}
}

// WriteFile leaves what Marshal makes.
func TestWriteFileWritesMarshal(t *testing.T) {
	f, err := ReadFile(validFiles(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := f.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want, _ := f.Marshal()
	if !bytes.Equal(got, want) {
		t.Error("WriteFile wrote other bytes than Marshal makes")
	}
}

// validFiles are the results files every check must accept.
func validFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("testdata/valid/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata/valid files")
	}
	return files
}

// A server is named once: "go server", not "go server server".
func TestServerName(t *testing.T) {
	for _, tc := range []struct{ impl, path, want string }{
		{"go", "/x/go/routeguide/server/server_/server", "go server"},
		{"lisp_tuned", "/x/lisp/routeguide/server", "lisp_tuned server"},
		{"lisp", "/x/lisp/qps/worker", "lisp server (worker)"},
	} {
		if got := ServerName(tc.impl, tc.path); got != tc.want {
			t.Errorf("ServerName(%q, %q) = %q, want %q", tc.impl, tc.path, got, tc.want)
		}
	}
}
