#!/usr/bin/env bash
# fuzz.sh tells a finding from the fuzzing engine missing its own -fuzztime deadline: a fake test
# binary fails each way, and only the run that wrote a failing input fails.
set -euo pipefail

fuzz=$TEST_SRCDIR/_main/tools/fuzz/fuzz.sh
bin=$TEST_TMPDIR/runfiles/fake
mkdir -p "$(dirname "$bin")"
cat >"$bin" <<'FAKE'
#!/usr/bin/env bash
case $FAKE_MODE in
  deadline)
    echo "fuzz: elapsed: 30s, execs: 1876376 (0/sec), new interesting: 23 (total: 29)"
    echo "--- FAIL: FuzzX (30.04s)"
    echo "    context deadline exceeded"
    echo FAIL
    exit 1 ;;
  finding)
    mkdir -p testdata/fuzz/FuzzX
    echo "go test fuzz v1" >testdata/fuzz/FuzzX/0123
    echo "--- FAIL: FuzzX (0.10s)"
    echo "    --- FAIL: FuzzX (0.00s)"
    echo "        x_test.go:9: bad"
    echo "    Failing input written to testdata/fuzz/FuzzX/0123"
    exit 1 ;;
  *) exit 0 ;;
esac
FAKE
chmod +x "$bin"

runfiles=$TEST_TMPDIR/runfiles

run() {
  local dir=$TEST_TMPDIR/$1
  mkdir -p "$dir"
  RUNFILES_DIR=$runfiles TEST_TMPDIR=$dir FAKE_MODE=$1 bash "$fuzz" pkg fake 1s FuzzX >"$dir.log" 2>&1
}

status=0
run ok || { echo "a clean run failed"; status=1; }
run deadline || { echo "the engine's deadline race counted as a finding:"; cat "$TEST_TMPDIR/deadline.log"; status=1; }
grep -q 'no failing input, so no finding' "$TEST_TMPDIR/deadline.log" || { echo "the deadline race went unreported"; status=1; }
if run finding; then
  echo "a run that wrote a failing input passed:"
  cat "$TEST_TMPDIR/finding.log"
  status=1
fi
exit "$status"
