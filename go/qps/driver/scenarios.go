package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/encoding/protojson"
)

// ParseScenarios reads gRPC's scenario JSON: a grpc.testing.Scenarios
// object, {"scenarios": [...]}, with field names in either proto or JSON
// spelling. "scenarios" may also be a single object, as gRPC's
// loadtest_config.py writes it into LoadTests (gRPC's C++ driver reads a
// lone value as a list of one). An unknown field is an error, not ignored:
// a misspelt option would otherwise run a different benchmark than the
// file says.
func ParseScenarios(data []byte) (*testpb.Scenarios, error) {
	var out testpb.Scenarios
	if err := protojson.Unmarshal(wrapLoneScenario(data), &out); err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	if len(out.Scenarios) == 0 {
		return nil, fmt.Errorf(`scenarios: none; want {"scenarios": [{"name": ..., ...}]}`)
	}
	return &out, nil
}

// wrapLoneScenario is data with its "scenarios" member made a list of one
// where it is an object. Every other member stays, a repeated one too, so
// that protojson refuses a file that names scenarios twice, as it refuses
// any field given twice, rather than one of them going unrun. Data that is
// not a JSON object, or has no lone scenario, comes back as it is.
func wrapLoneScenario(data []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return data
	}
	out, wrapped := []byte{'{'}, false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return data
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return data
		}
		key, _ := json.Marshal(t)
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(out, key...), ':')
		if t == "scenarios" && v[0] == '{' {
			out, wrapped = append(append(append(out, '['), v...), ']'), true
		} else {
			out = append(out, v...)
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') || !wrapped {
		return data
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return data
	}
	return append(out, '}')
}

// ParseWorkers splits a QPS_WORKERS list, "host1:port,host2:port", servers
// first. Each entry must be HOST:PORT.
func ParseWorkers(list string) ([]string, error) {
	var out []string
	for _, w := range strings.Split(list, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		host, port, err := net.SplitHostPort(w)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("worker %q is not HOST:PORT", w)
		}
		out = append(out, w)
	}
	return out, nil
}

// WorkersFromEnv is ParseWorkers of $QPS_WORKERS, where gRPC's driver looks
// for the workers, or else of the file $QPS_WORKERS_FILE names, which is
// how grpc/test-infra's LoadTest controller hands them to a driver.
func WorkersFromEnv() ([]string, error) {
	if list := os.Getenv("QPS_WORKERS"); list != "" {
		return ParseWorkers(list)
	}
	if file := os.Getenv("QPS_WORKERS_FILE"); file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("QPS_WORKERS_FILE: %w", err)
		}
		return ParseWorkers(strings.TrimSpace(string(data)))
	}
	return nil, nil
}
