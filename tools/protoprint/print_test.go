package main

import (
	"os"
	"strings"
	"testing"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	corepb "google.golang.org/grpc/interop/grpc_testing/core"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/grpcbench/grpcbench/internal/runfile"
)

var upstream = runtimeapi.File_staging_src_k8s_io_cri_api_pkg_apis_runtime_v1_api_proto

func printUpstream(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	if err := Print(&b, upstream); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPrintDeclaresWhatChunkedProtoUses(t *testing.T) {
	src := printUpstream(t)
	for _, want := range []string{
		`syntax = "proto3";`,
		"package runtime.v1;",
		`option go_package = "k8s.io/cri-api/pkg/apis/runtime/v1";`,
		"rpc StreamContainers(.runtime.v1.StreamContainersRequest) returns (stream .runtime.v1.StreamContainersResponse) {}",
		"message ContainerFilter {",
		"  map<string, string> label_selector = 4;",
		"message Container {",
		"  string seccomp_profile_path = 7 [deprecated = true];",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("printed api.proto lacks %q", want)
		}
	}
	if strings.Contains(src, "Entry {") {
		t.Error("printed api.proto declares a map entry message; maps must print as map<K, V>")
	}
}

func TestPrintIsDeterministic(t *testing.T) {
	if a, b := printUpstream(t), printUpstream(t); a != b {
		t.Error("two prints differ")
	}
}

// TestPrintedFilesCompileToTheUpstreamDescriptors is the real check: protoc
// (Bazel's proto_library) compiled each printed file, and its descriptor must
// equal the one the Go package embeds, apart from the file name and what only
// source text carries. Under `go test` there is no protoc, and the test skips.
func TestPrintedFilesCompileToTheUpstreamDescriptors(t *testing.T) {
	for _, c := range []struct {
		env      string // names the descriptor set in the runfiles
		upstream protoreflect.FileDescriptor
		name     string // the compiled file's name
	}{
		{"CRI_API_DESCRIPTOR_SET", upstream, "k8s.io/cri-api/pkg/apis/runtime/v1/api.proto"},
		{"HEALTH_DESCRIPTOR_SET", healthpb.File_grpc_health_v1_health_proto, "grpc/health/v1/health.proto"},
		{"REFLECTION_V1_DESCRIPTOR_SET", reflectionv1.File_grpc_reflection_v1_reflection_proto,
			"grpc/reflection/v1/reflection.proto"},
		{"REFLECTION_V1ALPHA_DESCRIPTOR_SET", reflectionv1alpha.File_grpc_reflection_v1alpha_reflection_proto,
			"grpc/reflection/v1alpha/reflection.proto"},
		{"INTEROP_EMPTY_DESCRIPTOR_SET", testpb.File_grpc_testing_empty_proto, "grpc/testing/empty.proto"},
		{"INTEROP_MESSAGES_DESCRIPTOR_SET", testpb.File_grpc_testing_messages_proto, "grpc/testing/messages.proto"},
		{"INTEROP_TEST_DESCRIPTOR_SET", testpb.File_grpc_testing_test_proto, "grpc/testing/test.proto"},
		{"QPS_CORE_STATS_DESCRIPTOR_SET", corepb.File_grpc_core_stats_proto, "grpc/core/stats.proto"},
		{"QPS_PAYLOADS_DESCRIPTOR_SET", testpb.File_grpc_testing_payloads_proto, "grpc/testing/payloads.proto"},
		{"QPS_STATS_DESCRIPTOR_SET", testpb.File_grpc_testing_stats_proto, "grpc/testing/stats.proto"},
		{"QPS_CONTROL_DESCRIPTOR_SET", testpb.File_grpc_testing_control_proto, "grpc/testing/control.proto"},
		{"QPS_BENCHMARK_SERVICE_DESCRIPTOR_SET", testpb.File_grpc_testing_benchmark_service_proto,
			"grpc/testing/benchmark_service.proto"},
		{"QPS_WORKER_SERVICE_DESCRIPTOR_SET", testpb.File_grpc_testing_worker_service_proto,
			"grpc/testing/worker_service.proto"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rel := os.Getenv(c.env)
			if rel == "" {
				t.Skipf("%s is not set; `bazel test //tools/protoprint:protoprint_test` sets it", c.env)
			}
			data, err := os.ReadFile(runfile.Path(rel))
			if err != nil {
				t.Fatal(err)
			}
			var set descriptorpb.FileDescriptorSet
			if err := proto.Unmarshal(data, &set); err != nil {
				t.Fatal(err)
			}
			if len(set.File) != 1 {
				t.Fatalf("descriptor set has %d files, want 1", len(set.File))
			}
			got, want := set.File[0], protodesc.ToFileDescriptorProto(c.upstream)
			if got.GetName() != c.name {
				t.Errorf("compiled file is named %q, want %q", got.GetName(), c.name)
			}
			normalize(got)
			normalize(want)
			if !proto.Equal(got, want) {
				t.Errorf("the printed file compiles to a different descriptor than the Go package's;\ngot  %v\nwant %v", got, want)
			}
		})
	}
}

// normalize clears what differs between two compilations of the same API:
// the file's name, source positions and comments, json_name, which protoc
// fills in for plugins (and so for the embedded descriptor) but not in
// descriptor sets, and a method's empty options, which protoc records for
// "rpc M(A) returns (B) {}" but not for "...;" (the same method).
func normalize(fd *descriptorpb.FileDescriptorProto) {
	fd.Name, fd.SourceCodeInfo = nil, nil
	for _, s := range fd.Service {
		for _, m := range s.Method {
			if m.Options != nil && proto.Size(m.Options) == 0 {
				m.Options = nil
			}
		}
	}
	var clearMessages func([]*descriptorpb.DescriptorProto)
	clearMessages = func(ms []*descriptorpb.DescriptorProto) {
		for _, m := range ms {
			for _, f := range m.Field {
				f.JsonName = nil
			}
			clearMessages(m.NestedType)
		}
	}
	clearMessages(fd.MessageType)
}
