#!/usr/bin/env bash
# Bazel's workspace status command (.bazelrc): the source revision that stamped benchmark results
# record (`--stamp`, see //tools/bench:defs.bzl). A stable key, so a stamped result is measured
# again when the revision changes; unstamped builds never read it. Outside a git checkout it says
# nothing, and the results record no revision.
set -u
rev=$(git rev-parse HEAD 2>/dev/null) || exit 0
# Uncommitted changes to tracked files make the revision an approximation: say so.
git diff --quiet HEAD -- 2>/dev/null || rev="$rev-dirty"
echo "STABLE_GRPCBENCH_REVISION $rev"
