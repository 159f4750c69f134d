#!/bin/sh
# Regenerate the binary FileDescriptorSet fixtures used by
# descriptor-tests.lisp.  PROTOC must point at a protoc binary; the
# fixtures are committed so the tests never need protoc.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
: "${PROTOC:?set PROTOC to a protoc binary}"
"$PROTOC" --descriptor_set_out="$here/route_guide.pb" \
  -I"$repo/proto/routeguide" route_guide.proto
"$PROTOC" --include_imports --descriptor_set_out="$here/test_types.pb" \
  -I"$repo/proto/routeguide" -I"$here" test_types.proto
