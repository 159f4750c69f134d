#!/usr/bin/env bash
# Copies generated files over their checked-in counterparts (same base name) in the workspace.
# Usage (through bazel run): update.sh GENERATED... -- CHECKED_IN...
set -euo pipefail

: "${BUILD_WORKSPACE_DIRECTORY:?run this through bazel run}"
generated=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do generated+=("$1"); shift; done
shift
for checked_in in "$@"; do
  for g in "${generated[@]}"; do
    if [ "$(basename "$g")" = "$(basename "$checked_in")" ]; then
      install -m 0644 "$g" "$BUILD_WORKSPACE_DIRECTORY/$checked_in"
      echo "updated $checked_in"
    fi
  done
done
