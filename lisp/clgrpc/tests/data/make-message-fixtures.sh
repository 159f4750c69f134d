#!/bin/sh
# Regenerate tests/data/messages/*.bin: messages encoded by the Go protobuf
# runtime (google.golang.org/protobuf, deterministic marshalling) from the
# descriptor sets in this directory, for codegen-tests.lisp.  Each NAME.bin
# comes with NAME.json, the protojson input it was built from.
#
# The Go program lives in this script, not in a .go file, so it is no part
# of the repository's Go module or of gazelle's view of it.  Needs `go` and
# the module version pinned below (in the module cache or from the proxy).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/messages"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/go.mod" <<'MOD'
module fixtures

go 1.22

require google.golang.org/protobuf v1.36.12
MOD

cat > "$work/main.go" <<'GO'
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

func main() {
	dataDir, outDir := os.Args[1], os.Args[2]
	raw, err := os.ReadFile(filepath.Join(dataDir, "test_types.pb"))
	check(err)
	var set descriptorpb.FileDescriptorSet
	check(proto.Unmarshal(raw, &set))
	files, err := protodesc.NewFiles(&set)
	check(err)
	for _, f := range os.Args[3:] {
		name := filepath.Base(f)
		name = name[:len(name)-len(".json")]
		// NAME is "<message full name>.<label>", e.g. routeguide.Point.basic
		full := name[:lastDot(name)]
		d, err := files.FindDescriptorByName(protoreflect.FullName(full))
		check(err)
		msg := dynamicpb.NewMessage(d.(protoreflect.MessageDescriptor))
		js, err := os.ReadFile(f)
		check(err)
		check(protojson.Unmarshal(js, msg))
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
		check(err)
		check(os.WriteFile(filepath.Join(outDir, name+".bin"), b, 0o644))
		fmt.Printf("%s: %d octets\n", name, len(b))
	}
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	panic("no label in " + s)
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
GO

(cd "$work" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 && GOFLAGS=-mod=mod go build -o fixtures .)
"$work/fixtures" "$here" "$out" "$out"/*.json
