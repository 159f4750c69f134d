#!/usr/bin/env bash
# Bazel's workspace status command (.bazelrc), run at every build:
# - STABLE_GRPCBENCH_HOST, this machine as host_key.sh describes it: every benchmark result's
#   action takes it as an input (//tools/bench:host_key), so a result is measured again on another
#   machine, or when this one changes, and records it.
# - STABLE_GRPCBENCH_REVISION, the source revision that stamped results record (`--stamp`, see
#   //tools/bench:defs.bzl): a stable key, so a stamped result is measured again when the revision
#   changes; unstamped builds never read it. Outside a git checkout it is left out, and the results
#   record no revision.
set -u
echo "STABLE_GRPCBENCH_HOST $("$(dirname "${BASH_SOURCE[0]}")/host_key.sh")"
rev=$(git rev-parse HEAD 2>/dev/null) || exit 0
# Uncommitted changes to tracked files make the revision an approximation: say so.
git diff --quiet HEAD -- 2>/dev/null || rev="$rev-dirty"
echo "STABLE_GRPCBENCH_REVISION $rev"
