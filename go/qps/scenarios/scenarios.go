package main

import (
	"fmt"
	"strings"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// shape is one of gRPC's standard benchmark scenarios, without its
// payload: the RPC type and how many calls are in flight.
type shape struct {
	name                  string
	rpc                   testpb.RpcType
	channels, outstanding int32
}

// shapes are gRPC's standard scenarios (tools/run_tests/performance in
// gRPC's repository names them LANG_protobuf_async_*): ping-pong, one call
// at a time on one channel, measures latency; "qps unconstrained" keeps
// many calls in flight on many channels, to find the most a server does.
// gRPC runs the latter at 64 channels of 100 calls on large machines; on
// the 2-core machines this repository measures on, 16 of 16 (256 calls)
// already keep a one-core server busy.
var shapes = []shape{
	{"unary_ping_pong", testpb.RpcType_UNARY, 1, 1},
	{"streaming_ping_pong", testpb.RpcType_STREAMING, 1, 1},
	{"unary_qps_unconstrained", testpb.RpcType_UNARY, 16, 16},
	{"streaming_qps_unconstrained", testpb.RpcType_STREAMING, 16, 16},
}

func shapeNamed(name string) (shape, error) {
	var names []string
	for _, s := range shapes {
		if s.name == name {
			return s, nil
		}
		names = append(names, s.name)
	}
	return shape{}, fmt.Errorf("no scenario %q; the scenarios are %s", name, strings.Join(names, ", "))
}

// scenario is the shape as a gRPC scenario: closed loop, payload octets
// each way, the standard histogram, and the given warm-up and measurement.
func (s shape) scenario(payload, warmupSeconds, benchmarkSeconds int) *testpb.Scenario {
	return &testpb.Scenario{
		Name:             fmt.Sprintf("%s/payload=%d", s.name, payload),
		NumServers:       1,
		NumClients:       1,
		WarmupSeconds:    int32(warmupSeconds),
		BenchmarkSeconds: int32(benchmarkSeconds),
		ServerConfig:     &testpb.ServerConfig{ServerType: testpb.ServerType_ASYNC_SERVER},
		ClientConfig: &testpb.ClientConfig{
			ClientType:                testpb.ClientType_ASYNC_CLIENT,
			OutstandingRpcsPerChannel: s.outstanding,
			ClientChannels:            s.channels,
			RpcType:                   s.rpc,
			LoadParams:                &testpb.LoadParams{Load: &testpb.LoadParams_ClosedLoop{ClosedLoop: &testpb.ClosedLoopParams{}}},
			PayloadConfig: &testpb.PayloadConfig{Payload: &testpb.PayloadConfig_SimpleParams{
				SimpleParams: &testpb.SimpleProtoParams{ReqSize: int32(payload), RespSize: int32(payload)}}},
			HistogramParams: &testpb.HistogramParams{Resolution: 0.01, MaxPossible: 60e9},
		},
	}
}
