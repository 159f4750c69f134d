package driver

import (
	"bytes"
	"testing"

	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// FuzzParseScenarios parses arbitrary bytes as scenario JSON. What it
// accepts holds a scenario, and written back by protojson parses to the
// same scenarios; a file protojson reads alone means the same to it; a
// lone scenario object means what a list of it means. The seeds are
// testdata/fuzz/FuzzParseScenarios (TestFuzzSeeds).
func FuzzParseScenarios(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseScenarios(data)
		var plain testpb.Scenarios
		if protojson.Unmarshal(data, &plain) == nil && len(plain.Scenarios) > 0 {
			if err != nil {
				t.Fatalf("ParseScenarios(%q) fails where protojson reads it: %v", data, err)
			}
			if !proto.Equal(got, &plain) {
				t.Fatalf("ParseScenarios(%q) =\n%v\nprotojson:\n%v", data, got, &plain)
			}
		}
		if err != nil {
			if got != nil {
				t.Fatalf("ParseScenarios failed (%v) with scenarios", err)
			}
			return
		}
		if len(got.Scenarios) == 0 {
			t.Fatalf("ParseScenarios(%q) accepted no scenarios", data)
		}
		checkReparse(t, data, got, mustMarshal(t, got))
		if len(got.Scenarios) == 1 {
			lone := mustMarshal(t, got.Scenarios[0])
			checkReparse(t, data, got, bytes.Join([][]byte{[]byte(`{"scenarios": `), lone, []byte(`}`)}, nil))
		}
	})
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkReparse requires ParseScenarios to read again, written as
// rewritten, the scenarios it read from data.
func checkReparse(t *testing.T, data []byte, want *testpb.Scenarios, rewritten []byte) {
	t.Helper()
	back, err := ParseScenarios(rewritten)
	if err != nil {
		t.Fatalf("ParseScenarios accepted %q, and not %q: %v", data, rewritten, err)
	}
	if !proto.Equal(back, want) {
		t.Fatalf("%q parsed as\n%v\n%q as\n%v", data, want, rewritten, back)
	}
}
