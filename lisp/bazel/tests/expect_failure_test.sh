#!/usr/bin/env bash
# Runs a lisp_test whose suite fails on purpose and checks that the failure is reported: a non-zero
# exit, FiveAM's explanation on stdout, and a <failure> in the XML report for Bazel.
set -uo pipefail

test_launcher=$1
xml=$TEST_TMPDIR/failing.xml
out=$TEST_TMPDIR/failing.out

XML_OUTPUT_FILE=$xml "$test_launcher" > "$out" 2>&1
status=$?
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ "$status" = 1 ] || fail "expected exit status 1 from the failing suite, got $status"
grep -q "two and two make four, not five" "$out" || fail "FiveAM's failure reason is not in the output"
grep -q '<failure message="two and two make four, not five"' "$xml" || fail "no <failure> in the XML report"
grep -q 'name="arithmetic-still-works"></testcase>' "$xml" || fail "the passing test is not reported as passed"
echo "PASS: the failing lisp_test failed as it should"
