package main

import (
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/grpcbench/grpcbench/go/internal/runfile"
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

// TestPrintedFileCompilesToTheUpstreamDescriptor is the real check: protoc
// (Bazel's proto_library //proto/cri:cri_api_proto) compiled the printed
// file, and its descriptor must equal the one the Go package embeds, apart
// from the file name and what only source text carries. Under `go test`
// there is no protoc, and the test skips.
func TestPrintedFileCompilesToTheUpstreamDescriptor(t *testing.T) {
	rel := os.Getenv("CRI_API_DESCRIPTOR_SET")
	if rel == "" {
		t.Skip("CRI_API_DESCRIPTOR_SET is not set; `bazel test //go/cri/apiproto:apiproto_test` sets it")
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
	got, want := set.File[0], protodesc.ToFileDescriptorProto(upstream)
	if got.GetName() != "k8s.io/cri-api/pkg/apis/runtime/v1/api.proto" {
		t.Errorf("compiled file is named %q, want the module path", got.GetName())
	}
	normalize(got)
	normalize(want)
	if !proto.Equal(got, want) {
		t.Errorf("the printed api.proto compiles to a different descriptor than the Go package's;\ngot  %v\nwant %v", got, want)
	}
}

// normalize clears what differs between two compilations of the same API:
// the file's name, source positions and comments, and json_name, which
// protoc fills in for plugins (and so for the embedded descriptor) but not
// in descriptor sets.
func normalize(fd *descriptorpb.FileDescriptorProto) {
	fd.Name, fd.SourceCodeInfo = nil, nil
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
