#!/usr/bin/env bash
# Runs lisp_library's file-order check (asdf_order.lisp) on a two-file system: the .asd's order
# passes, and a swapped or missing file fails with a message that names the first difference; an
# .asd whose file depends on a later one is refused.
#
#   asdf_order_test.sh SBCL SCRIPT ASD
set -uo pipefail

sbcl=$1 script=$2 asd=$3
root=$(cd "$(dirname "$sbcl")/../.." && pwd)
dir=$(dirname "$asd")
fail() { echo "FAIL: $*"; exit 1; }

# check_system ASD SYSTEM OUT SRC...: runs the script; its stderr goes to $TEST_TMPDIR/err.
check_system() {
  local system_asd=$1 system=$2 out=$3
  shift 3
  SBCL_HOME=$root/usr/lib/sbcl LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu \
    "$sbcl" --core "$root/usr/lib/sbcl/sbcl.core" --script "$script" "$out" "$system_asd" "$system" "$dir" "$@" \
    2> "$TEST_TMPDIR/err"
}
check() { check_system "$asd" order "$@"; }

check "$TEST_TMPDIR/ok" "$dir/first.lisp" "$dir/sub/second.lisp" || fail "the .asd's own order was refused: $(cat "$TEST_TMPDIR/err")"
[ -f "$TEST_TMPDIR/ok" ] || fail "no output file when the lists agree"

check "$TEST_TMPDIR/swapped" "$dir/sub/second.lisp" "$dir/first.lisp" && fail "a swapped order passed"
[ ! -e "$TEST_TMPDIR/swapped" ] || fail "an output file although the lists differ"
grep -q "First difference, at file 1: srcs has sub/second.lisp, order.asd has first.lisp" "$TEST_TMPDIR/err" \
  || fail "no clear message for a swapped order: $(cat "$TEST_TMPDIR/err")"

check "$TEST_TMPDIR/missing" "$dir/first.lisp" && fail "a missing file passed"
grep -q "at file 2: srcs has nothing, order.asd has sub/second.lisp" "$TEST_TMPDIR/err" \
  || fail "no clear message for a missing file: $(cat "$TEST_TMPDIR/err")"
check_system "$dir/later.asd" later "$TEST_TMPDIR/later" "$dir/first.lisp" "$dir/second.lisp" && fail "a file depending on a later one passed"
grep -q "(later first) depends on second, which the .asd lists after it" "$TEST_TMPDIR/err" \
  || fail "no clear message for a file that depends on a later one: $(cat "$TEST_TMPDIR/err")"
echo "PASS: the file-order check accepts the .asd's order and names the first difference otherwise"
