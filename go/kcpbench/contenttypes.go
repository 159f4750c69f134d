package main

import (
	"fmt"
	"slices"
	"strings"
)

// The four wire formats compared, as the media types the
// client sends in Content-Type and Accept and the server answers with.
const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
	mediaCBOR     = "application/cbor"
)

var allMediaTypes = []string{mediaJSON, mediaYAML, mediaProtobuf, mediaCBOR}

// formatNames are the short names of the serialization micro-benchmark,
// as in BenchmarkSerialization/json etc. of the prior measurement
// (docs/prior-results.md).
var formatNames = map[string]string{
	mediaJSON: "json", mediaYAML: "yaml", mediaProtobuf: "protobuf", mediaCBOR: "cbor",
}

// parseMediaTypes reads a comma-separated list of media types or their short
// names (json, yaml, protobuf, cbor), in the order given.
func parseMediaTypes(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		m, ok := "", false
		for media, short := range formatNames {
			if f == media || f == short {
				m, ok = media, true
			}
		}
		if !ok {
			return nil, fmt.Errorf("unknown content type %q: want json, yaml, protobuf, cbor or their media types", f)
		}
		if slices.Contains(out, m) {
			return nil, fmt.Errorf("content type %q given twice", f)
		}
		out = append(out, m)
	}
	return out, nil
}
