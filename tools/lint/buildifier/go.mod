// The lint phase's buildifier, built from its Go module (go.sum holds the checksums). The version is
// the buildtools that gazelle 0.53.0 formats BUILD files with, so that the buildifier check and the
// gazelle check never ask for different formatting. A module of its own, so that the repository's
// go.mod does not carry a tool.
module github.com/grpcbench/grpcbench/tools/lint/buildifier

go 1.26

tool github.com/bazelbuild/buildtools/buildifier

require (
	github.com/bazelbuild/buildtools v0.0.0-20250930140053-2eb4fccefb52 // indirect
	github.com/golang/protobuf v1.5.0 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)
