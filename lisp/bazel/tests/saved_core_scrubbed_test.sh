#!/usr/bin/env bash
# Checks an executable that lisp_binary saved: it has fillers (the padding between objects that
# the save's last collection leaves) and every one of them is clear, so nothing of the saving
# process's garbage is left in it; scrubbing it again changes no byte; it runs; and the driver
# refuses a file that is not a saved executable, with a message and a non-zero exit.
#
#   saved_core_scrubbed_test.sh EXE SBCL DRIVER
set -uo pipefail

exe=$1 sbcl=$2 driver=$3
root=$(cd "$(dirname "$sbcl")/../.." && pwd)
fail() { echo "FAIL: $*"; exit 1; }

driver() {
  SBCL_HOME=$root/usr/lib/sbcl LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu \
    "$sbcl" --core "$root/usr/lib/sbcl/sbcl.core" --noinform --disable-ldb --end-runtime-options \
    --no-sysinit --no-userinit --non-interactive --load "$driver" --end-toplevel-options "$@"
}

fillers=$(driver fillers "$exe") || fail "counting the fillers failed: $fillers"
echo "$fillers"
[[ $fillers =~ ^fillers\ ([0-9]+)\ unclear\ ([0-9]+)$ ]] || fail "unexpected output: $fillers"
[ "${BASH_REMATCH[1]}" -gt 0 ] || fail "no fillers found: the walk did not see the pages it clears"
[ "${BASH_REMATCH[2]}" = 0 ] || fail "${BASH_REMATCH[2]} fillers still hold the saving process's words"

copy=$TEST_TMPDIR/saved
cp "$exe" "$copy" && chmod u+w "$copy"
driver scrub "$copy" || fail "scrubbing a saved executable failed"
cmp "$exe" "$copy" || fail "scrubbing a saved executable changed it: the save left filler payloads"
"$copy" > "$TEST_TMPDIR/out" 2>&1 || fail "the scrubbed executable does not run: $(cat "$TEST_TMPDIR/out")"

printf 'not a core' > "$TEST_TMPDIR/other"
if driver scrub "$TEST_TMPDIR/other" > "$TEST_TMPDIR/err" 2>&1; then
  fail "scrub accepted a file that is not a saved executable"
fi
grep -q "not an executable with an SBCL core" "$TEST_TMPDIR/err" || fail "no clear message: $(cat "$TEST_TMPDIR/err")"
echo "PASS: the saved executable's fillers are all clear, and the driver refuses other files"
