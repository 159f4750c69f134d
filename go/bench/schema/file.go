package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// NewFile starts a results file for suite measured in env.
func NewFile(suite string, env Environment) *File {
	return &File{Schema: Version, Suite: suite, Environment: env}
}

// Marshal encodes f as JSON after validating it, so that no tool of this
// repository ever writes a file its own validator would reject. Each result
// is one line, and the environment another: a file measured again differs
// from the last by a line a scenario, not by every indented field of it.
func (f *File) Marshal() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n")
	for _, field := range []struct {
		name  string
		value any
	}{{"schema", f.Schema}, {"suite", f.Suite}, {"environment", f.Environment}} {
		line, err := json.Marshal(field.value)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "  %q: %s,\n", field.name, line)
	}
	b.WriteString(`  "results": [`)
	for i, r := range f.Results {
		line, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		b.Write(line)
	}
	if len(f.Results) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]\n}\n")
	if err := Validate(b.Bytes()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteFile validates f and writes it to path.
func (f *File) WriteFile(path string) error {
	data, err := f.Marshal()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, data, 0o644)
}

// ReadFile reads and validates the results file at path.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
