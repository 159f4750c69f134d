// Command protoprint writes the .proto source of a file that a linked Go
// package embeds as a descriptor, printed from that descriptor:
//
//	protoprint -file k8s.io/cri-api/pkg/apis/runtime/v1/api.proto
//	protoprint -file grpc/health/v1/health.proto
//
// Why: //proto/cri/chunked.proto imports the upstream CRI messages, so protoc
// needs api.proto, and the Lisp services need grpc-go's health, reflection,
// interop and benchmark protos. The modules ship them, but go_deps generates
// no Bazel target for them (their BUILD files say "gazelle:proto disable").
// Their copies under //proto are this program's output, checked in, and a
// test per file (proto/defs.bzl) fails when the copy differs from what it
// prints from the Go packages we link, so the two cannot drift apart.
// //tools/protoprint:protoprint_test compiles the printed files and checks
// that protoc reads back the identical descriptors.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// The packages whose files can be printed: they register their
	// descriptors with protoregistry.GlobalFiles.
	_ "google.golang.org/grpc/health/grpc_health_v1"
	_ "google.golang.org/grpc/interop/grpc_testing"
	_ "google.golang.org/grpc/reflection/grpc_reflection_v1"
	_ "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	_ "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	name := flag.String("file", "", "`path` of the .proto file, as the Go package registers it")
	flag.Parse()
	if *name == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: protoprint -file PATH")
		flag.PrintDefaults()
		os.Exit(2)
	}
	if err := run(*name); err != nil {
		fmt.Fprintf(os.Stderr, "protoprint: %v\n", err)
		os.Exit(1)
	}
}

func run(name string) error {
	fd, err := protoregistry.GlobalFiles.FindFileByPath(name)
	if err != nil {
		return fmt.Errorf("%s: %w (known files: %v)", name, err, knownFiles())
	}
	out := bufio.NewWriter(os.Stdout)
	if err := Print(out, fd); err != nil {
		return err
	}
	return out.Flush()
}

func knownFiles() []string {
	var names []string
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		names = append(names, fd.Path())
		return true
	})
	return names
}
