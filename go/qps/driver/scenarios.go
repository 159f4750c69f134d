package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err == nil {
		if one, ok := top["scenarios"]; ok && len(bytes.TrimSpace(one)) > 0 && bytes.TrimSpace(one)[0] == '{' {
			top["scenarios"] = append(append([]byte{'['}, one...), ']')
			data, _ = json.Marshal(top)
		}
	}
	var out testpb.Scenarios
	if err := protojson.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	if len(out.Scenarios) == 0 {
		return nil, fmt.Errorf(`scenarios: none; want {"scenarios": [{"name": ..., ...}]}`)
	}
	return &out, nil
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
