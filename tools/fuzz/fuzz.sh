#!/usr/bin/env bash
# Coverage-guided fuzzing of a Go package's fuzz targets, with the test binary that go_fuzz_test
# (defs.bzl) built with coverage instrumentation: the fuzzing engine is in the binary itself
# (testing and internal/fuzz), so neither the go tool nor the network is needed.
#
#   fuzz.sh PACKAGE BINARY FUZZTIME TARGET... -- [-fuzztime=D] [-parallel=N] [-fuzzminimizetime=D] [TARGET...]
#
# PACKAGE is the package's path in the workspace and BINARY its instrumented test binary's
# runfiles path; the targets after `--` (default: every TARGET) each run for FUZZTIME (or
# -fuzztime, or $FUZZTIME), one after the other.
#
# As a test, each target runs over a copy of its seeds (testdata/fuzz/TARGET) with an empty cache,
# on one core; a failing input is printed and kept in the test's outputs (outputs.zip).
# Under `bazel run`, it runs in the package's source directory, so that a failing input lands in
# testdata/fuzz/TARGET, ready to check in as a regression seed, and the corpus it grows is kept in
# ${XDG_CACHE_HOME:-~/.cache}/grpcbench/fuzz for the next run.
set -euo pipefail

r=${RUNFILES_DIR:-${TEST_SRCDIR:-$0.runfiles}}
package=$1
binary=$r/$2
fuzztime=${FUZZTIME:-$3}
shift 3
targets=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  targets+=("$1")
  shift
done
[ $# -gt 0 ] && shift
parallel=1
minimize=1s
asked=()
for arg in "$@"; do
  case $arg in
    -fuzztime=*) fuzztime=${arg#*=} ;;
    -parallel=*) parallel=${arg#*=} ;;
    -fuzzminimizetime=*) minimize=${arg#*=} ;;
    Fuzz*) asked+=("$arg") ;;
    *) echo "fuzz.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done
[ ${#asked[@]} -gt 0 ] && targets=("${asked[@]}")

if [ -n "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then
  workdir=$BUILD_WORKSPACE_DIRECTORY/$package
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/grpcbench/fuzz/$package
else
  workdir=$TEST_TMPDIR/work
  cache=$TEST_TMPDIR/cache
  export GOMAXPROCS=1 # with one worker, the test's claim of one core
fi
mkdir -p "$workdir" "$cache"
cd "$workdir"

failed=0
for target in "${targets[@]}"; do
  seeds=testdata/fuzz/$target
  if [ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then
    mkdir -p "$seeds"
    if [ -d "$r/_main/$package/$seeds" ]; then
      cp -L "$r/_main/$package/$seeds"/* "$seeds"/
    fi
  fi
  echo "== $target: fuzzing for $fuzztime with $parallel worker(s)"
  before=$(ls "$seeds" 2>/dev/null || true)
  log=$(mktemp)
  # GO_TEST_WRAP=0: the binary's own Bazel wrapper would re-run it as a child.
  if GO_TEST_WRAP=0 "$binary" -test.run='^$' -test.fuzz="^$target\$" -test.fuzztime="$fuzztime" \
    -test.fuzzminimizetime="$minimize" -test.parallel="$parallel" -test.fuzzcachedir="$cache" 2>&1 | tee "$log"; then
    rm -f "$log"
    continue
  fi
  # A finding always writes its input to $seeds. A run that wrote none and failed only with
  # "context deadline exceeded" lost the engine's race with its own -fuzztime deadline on a busy
  # machine (golang/go#75804): it found nothing, and says so instead of failing.
  if [ "$(ls "$seeds" 2>/dev/null || true)" = "$before" ] && grep -q '^    context deadline exceeded$' "$log" &&
    [ "$(grep -c '^    ' "$log")" -eq 1 ] && ! grep -q 'panic:\|Failing input' "$log"; then
    echo "== $target: the engine missed its own -fuzztime deadline (golang/go#75804); no failing input, so no finding"
    rm -f "$log"
    continue
  fi
  rm -f "$log"
  failed=1
  if [ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then
    for f in "$seeds"/*; do
      if [ ! -e "$r/_main/$package/$f" ]; then
        echo "== failing input (in the test's outputs.zip; check it in as $package/$f):"
        cat "$f"
        mkdir -p "${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR}/$seeds"
        cp "$f" "${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR}/$seeds/"
      fi
    done
  fi
done
exit "$failed"
