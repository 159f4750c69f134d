package schema

import (
	"encoding/json"
	"fmt"
	"os"
)

// NewFile starts a results file for suite measured in env.
func NewFile(suite string, env Environment) *File {
	return &File{Schema: Version, Suite: suite, Environment: env}
}

// Marshal encodes f as indented JSON after validating it, so that no tool
// of this repository ever writes a file its own validator would reject.
func (f *File) Marshal() ([]byte, error) {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := Validate(data); err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
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
