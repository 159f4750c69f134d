// Command apiproto writes the .proto source of the CRI API (k8s.io/cri-api,
// package runtime.v1) to stdout, printed from the file descriptor that the
// module's Go package embeds.
//
// Why: //proto/cri/chunked.proto imports the upstream messages, so protoc
// needs api.proto. The module ships it, but go_deps generates no Bazel
// target for it (its BUILD files say "gazelle:proto disable"), and copying
// it into this repository would let the copy drift from the Go code we
// link. Printing it from the linked Go package makes the two the same by
// construction; //go/cri/apiproto:apiproto_test compiles the printed file
// and checks that protoc reads back the identical descriptor.
package main

import (
	"bufio"
	"fmt"
	"os"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	out := bufio.NewWriter(os.Stdout)
	err := Print(out, runtimeapi.File_staging_src_k8s_io_cri_api_pkg_apis_runtime_v1_api_proto)
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "apiproto: %v\n", err)
		os.Exit(1)
	}
}
