package driver

import (
	"strings"
	"testing"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// A scenario as gRPC's scenario generator writes it, proto field names.
const unaryPingPong = `{"scenarios": [{
  "name": "go_protobuf_sync_unary_ping_pong_insecure",
  "warmup_seconds": 5, "benchmark_seconds": 30, "num_servers": 1, "num_clients": 1,
  "server_config": {"server_type": "SYNC_SERVER", "async_server_threads": 1, "security_params": null},
  "client_config": {"client_type": "SYNC_CLIENT", "security_params": null, "outstanding_rpcs_per_channel": 1,
    "client_channels": 1, "async_client_threads": 1, "rpc_type": "UNARY", "load_params": {"closed_loop": {}},
    "payload_config": {"simple_params": {"req_size": 0, "resp_size": 0}},
    "histogram_params": {"resolution": 0.01, "max_possible": 60000000000}}
}]}`

func TestParseScenariosReadsGrpcsFormat(t *testing.T) {
	s, err := ParseScenarios([]byte(unaryPingPong))
	if err != nil {
		t.Fatal(err)
	}
	sc := s.Scenarios[0]
	if sc.Name != "go_protobuf_sync_unary_ping_pong_insecure" || sc.BenchmarkSeconds != 30 ||
		sc.ClientConfig.RpcType != testpb.RpcType_UNARY || sc.ClientConfig.GetLoadParams().GetClosedLoop() == nil ||
		sc.ClientConfig.HistogramParams.MaxPossible != 60e9 {
		t.Errorf("parsed %v", sc)
	}
}

// test-infra's LoadTests carry one scenario as an object, not a list.
func TestParseScenariosTakesALoneScenario(t *testing.T) {
	s, err := ParseScenarios([]byte(`{"scenarios": {"name": "one", "num_servers": 1,
	  "client_config": {"channel_args": [{"name": "grpc.optimization_target", "str_value": "latency"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Scenarios) != 1 || s.Scenarios[0].Name != "one" || s.Scenarios[0].ClientConfig.ChannelArgs[0].GetStrValue() != "latency" {
		t.Errorf("parsed %v", s)
	}
}

func TestParseScenariosRefusesUnknownFieldsAndNothing(t *testing.T) {
	for in, want := range map[string]string{
		`{"scenarios": [{"name": "x", "benchmark_secnds": 3}]}`: "benchmark_secnds",
		`{"scenarios": []}`: "none",
		`{"scenarios": [{"name": "a"}], "scenarios": {"name": "b"}}`: "duplicate",
		`{"scenarios": {"name": "a"}, "scenarios": {"name": "b"}}`:   "duplicate",
		`not json`: "scenarios",
	} {
		if _, err := ParseScenarios([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseScenarios(%s): %v, want an error naming %q", in, err, want)
		}
	}
}

func TestParseWorkers(t *testing.T) {
	got, err := ParseWorkers("a:1, [::1]:2,,b:3")
	if err != nil || strings.Join(got, " ") != "a:1 [::1]:2 b:3" {
		t.Errorf("ParseWorkers = %q, %v", got, err)
	}
	for _, bad := range []string{"a", "a:", ":1", "::1:2"} {
		if _, err := ParseWorkers(bad); err == nil {
			t.Errorf("ParseWorkers(%q) succeeded", bad)
		}
	}
}

func TestCheckScenarioNamesWhatItCannotRun(t *testing.T) {
	base := func() *testpb.Scenario {
		s, err := ParseScenarios([]byte(unaryPingPong))
		if err != nil {
			t.Fatal(err)
		}
		return s.Scenarios[0]
	}
	for want, edit := range map[string]func(*testpb.Scenario){
		"num_servers":              func(s *testpb.Scenario) { s.NumServers = 2 },
		"spawn_local_worker_count": func(s *testpb.Scenario) { s.SpawnLocalWorkerCount = 2 },
		"benchmark_seconds":        func(s *testpb.Scenario) { s.BenchmarkSeconds = 0 },
		"client_channels":          func(s *testpb.Scenario) { s.ClientConfig.ClientChannels = 0 },
		"server_targets":           func(s *testpb.Scenario) { s.ClientConfig.ServerTargets = []string{"x:1"} },
		"client_config":            func(s *testpb.Scenario) { s.ClientConfig = nil },
	} {
		sc := base()
		edit(sc)
		if err := checkScenario(sc); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("scenario with bad %s: %v", want, err)
		}
	}
	if err := checkScenario(base()); err != nil {
		t.Errorf("the standard scenario: %v", err)
	}
}
