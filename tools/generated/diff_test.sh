#!/usr/bin/env bash
# Fails when a checked-in file differs from its generated counterpart (same base name).
# Usage: diff_test.sh GENERATED... -- CHECKED_IN...
set -euo pipefail

generated=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do generated+=("$1"); shift; done
shift
status=0
for checked_in in "$@"; do
  match=
  for g in "${generated[@]}"; do
    if [ "$(basename "$g")" = "$(basename "$checked_in")" ]; then match=$g; fi
  done
  if [ -z "$match" ]; then
    echo "FAIL: nothing generated is named $(basename "$checked_in")"
    status=1
  elif ! diff -u "$checked_in" "$match"; then
    echo "FAIL: $checked_in is stale; run the update target (bazel run) named like this test without _test"
    status=1
  else
    echo "ok: $checked_in"
  fi
done
exit $status
