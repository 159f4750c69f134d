// Package scenarios holds gRPC's standard benchmark scenarios as this
// repository runs them: the benchmark suite (go/qps/bench) measures them and
// go/qps/loadtest writes them into grpc/test-infra LoadTests, so a cluster
// runs exactly what the suite measured.
package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// Shape is one of gRPC's standard benchmark scenarios, without its
// payload: the RPC type and how many calls are in flight.
type Shape struct {
	Name                  string
	RPC                   testpb.RpcType
	Channels, Outstanding int32
}

// Shapes are gRPC's standard scenarios (tools/run_tests/performance in
// gRPC's repository names them LANG_protobuf_async_*): ping-pong, one call
// at a time on one channel, measures latency; "qps unconstrained" keeps
// many calls in flight on many channels, to find the most a server does.
// gRPC runs the latter at 64 channels of 100 calls on large machines; on
// the 2-core machines this repository measures on, 16 of 16 (256 calls)
// already keep a one-core server busy.
var Shapes = []Shape{
	{"unary_ping_pong", testpb.RpcType_UNARY, 1, 1},
	{"streaming_ping_pong", testpb.RpcType_STREAMING, 1, 1},
	{"unary_qps_unconstrained", testpb.RpcType_UNARY, 16, 16},
	{"streaming_qps_unconstrained", testpb.RpcType_STREAMING, 16, 16},
}

// Named is the shape called name.
func Named(name string) (Shape, error) {
	var names []string
	for _, s := range Shapes {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Shape{}, fmt.Errorf("no scenario %q; the scenarios are %s", name, strings.Join(names, ", "))
}

// Scenario is the shape as a gRPC scenario: closed loop, payload octets
// each way, the standard histogram, and the given warm-up and measurement.
func (s Shape) Scenario(payload, warmupSeconds, benchmarkSeconds int) *testpb.Scenario {
	return &testpb.Scenario{
		Name:             fmt.Sprintf("%s/payload=%d", s.Name, payload),
		NumServers:       1,
		NumClients:       1,
		WarmupSeconds:    int32(warmupSeconds),
		BenchmarkSeconds: int32(benchmarkSeconds),
		ServerConfig:     &testpb.ServerConfig{ServerType: testpb.ServerType_ASYNC_SERVER},
		ClientConfig: &testpb.ClientConfig{
			ClientType:                testpb.ClientType_ASYNC_CLIENT,
			OutstandingRpcsPerChannel: s.Outstanding,
			ClientChannels:            s.Channels,
			RpcType:                   s.RPC,
			LoadParams:                &testpb.LoadParams{Load: &testpb.LoadParams_ClosedLoop{ClosedLoop: &testpb.ClosedLoopParams{}}},
			PayloadConfig: &testpb.PayloadConfig{Payload: &testpb.PayloadConfig_SimpleParams{
				SimpleParams: &testpb.SimpleProtoParams{ReqSize: int32(payload), RespSize: int32(payload)}}},
			HistogramParams: &testpb.HistogramParams{Resolution: 0.01, MaxPossible: 60e9},
		},
	}
}

// SplitList splits a comma-separated flag value, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ParseSelection reads the -scenarios and -payloads flags that the suite
// and the LoadTest generator share: shape names, and payload sizes in
// octets (at most 4 MiB less 1 KiB, what a receiver accepts by default).
// Each must name at least one.
func ParseSelection(names, payloads string) ([]Shape, []int, error) {
	var shapes []Shape
	for _, name := range SplitList(names) {
		s, err := Named(name)
		if err != nil {
			return nil, nil, fmt.Errorf("-scenarios: %w", err)
		}
		shapes = append(shapes, s)
	}
	var sizes []int
	for _, p := range SplitList(payloads) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > MaxPayload {
			return nil, nil, fmt.Errorf("-payloads: %q is not a size from 0 to %d", p, MaxPayload)
		}
		sizes = append(sizes, n)
	}
	if len(shapes) == 0 || len(sizes) == 0 {
		return nil, nil, fmt.Errorf("-scenarios and -payloads must name at least one each")
	}
	return shapes, sizes, nil
}

// MaxPayload is the largest payload a scenario may carry each way: what
// fits, with its framing, in the 4 MiB that gRPC receivers accept by
// default (the Lisp worker refuses more).
const MaxPayload = 4<<20 - 1024
