// The lint phase's buildifier, built from its Go module at this pinned version (go.sum holds its
// checksums). A module of its own, so that the repository's go.mod does not carry a tool.
module github.com/grpcbench/grpcbench/tools/lint/buildifier

go 1.26

require github.com/bazelbuild/buildtools v0.0.0-20260904073137-eaa4d125b423

require (
	github.com/golang/protobuf v1.5.0 // indirect
	github.com/google/safeopen v0.0.0-20260327150837-43626d6f4685 // indirect
	golang.org/x/sys v0.10.0 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)
