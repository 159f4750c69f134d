#!/usr/bin/env bash
# Runs clgrpc's fuzzing executable (clgrpc_fuzz_tests, defs.bzl) from Bazel's runfiles.
#
#   fuzz.sh PACKAGE BINARY CHIPZ_FILE CA_FILE LIBSSL SECONDS TARGET... -- [--seconds N] [--uncovered] [TARGET...]
#
# PACKAGE is clgrpc's path in the workspace; BINARY, CHIPZ_FILE (a file of chipz's sources),
# CA_FILE (of //tools/testcerts) and LIBSSL are runfiles paths. Each target (those after `--`, or
# every TARGET) runs for SECONDS (or --seconds, or $FUZZ_SECONDS), one after the other;
# --uncovered lists the functions each reached but did not cover entirely.
#
# As a test, the engine reads the sources, seeds and recorded findings from the runfiles, and a
# new finding is printed and kept in the test's outputs (outputs.zip), ready to check in as
# PACKAGE/fuzz/crashes/TARGET/NAME. Under `bazel run`, it reads them from the source tree, so a
# finding lands in fuzz/crashes/TARGET at once, and the corpus it grows is kept in
# ${XDG_CACHE_HOME:-~/.cache}/grpcbench/fuzz/PACKAGE for the next run.
set -euo pipefail

r=${RUNFILES_DIR:-${TEST_SRCDIR:-$0.runfiles}}
package=$1
binary=$r/$2
chipz=$(dirname "$r/$3")
export CLGRPC_TEST_CREDENTIALS
CLGRPC_TEST_CREDENTIALS=$(dirname "$r/$4")
export LD_LIBRARY_PATH
LD_LIBRARY_PATH=$(dirname "$r/$5")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
seconds=${FUZZ_SECONDS:-$6}
shift 6
targets=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  targets+=("$1")
  shift
done
[ $# -gt 0 ] && shift
asked=()
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --seconds=*) seconds=${1#*=}; shift ;;
    --uncovered) extra+=("$1"); shift ;;
    -*) echo "fuzz.sh: unknown argument $1" >&2; exit 2 ;;
    *) asked+=("$1"); shift ;;
  esac
done
[ ${#asked[@]} -gt 0 ] && targets=("${asked[@]}")

if [ -n "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then
  sources=$BUILD_WORKSPACE_DIRECTORY/$package
  where=(--save-corpus "${XDG_CACHE_HOME:-$HOME/.cache}/grpcbench/fuzz/$package")
else
  sources=$r/_main/$package
  where=(--findings "${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR}/fuzz/crashes")
fi

exec "$binary" --sources "$sources" --chipz "$chipz" --seconds "$seconds" "${where[@]}" ${extra[@]+"${extra[@]}"} \
  "${targets[@]}"
