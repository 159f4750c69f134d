#!/usr/bin/env bash
# The arm64 Lisp server, under qemu-user, answers the (amd64) Go client
# exactly like the Go server does, for all four RPCs:
#   arm64_interop_test.sh SERVER_LAUNCHER SERVER_EXECUTABLE GO_SERVER GO_CLIENT
# SERVER_LAUNCHER runs SERVER_EXECUTABLE (an aarch64 ELF file) under qemu.
set -euo pipefail
launcher="$1" executable="$2" go_server="$3" go_client="$4"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
pids=()
# shellcheck disable=SC2317 # called by the EXIT trap
kill_all() { local p; for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; }
trap kill_all EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# The server under test really is an aarch64 executable: ELF e_machine 183.
machine=$(od -An -tu2 -j18 -N2 "$executable" | tr -d ' ')
[[ "$machine" == 183 ]] || fail "$executable is not aarch64 (e_machine $machine)"

# start NAME PROGRAM: runs PROGRAM -addr 127.0.0.1:0 in the background and
# sets $pid and $port once it prints "listening on 127.0.0.1:PORT".
start() {
  local name="$1" program="$2" line=""
  # Made here: the background job opens it only once it runs, and head
  # on a missing file would end this script (set -e).
  : >"$tmp/$name.out"
  "$program" -addr 127.0.0.1:0 >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 600); do  # SBCL under qemu takes a few seconds to start
    line=$(head -n1 "$tmp/$name.out")
    [[ "$line" == "listening on 127.0.0.1:"* ]] && break
    kill -0 "$pid" 2>/dev/null || fail "$name exited before listening: $(cat "$tmp/$name.err")"
    sleep 0.1
  done
  [[ "$line" == "listening on 127.0.0.1:"* ]] || fail "$name printed no listening line: '$line'"
  port="${line##*:}"
}

# stop NAME: SIGTERM, and the server must exit 0 (a graceful stop).
stop() {
  kill -TERM "$pid"
  local status=0
  wait "$pid" || status=$?
  [[ "$status" == 0 ]] || fail "$1 exited with status $status after SIGTERM: $(cat "$tmp/$1.err")"
}

start go "$go_server"
"$go_client" -addr "127.0.0.1:$port" -rpc all -points 200 >"$tmp/expected" 2>&1 ||
  fail "Go client against the Go server: $(cat "$tmp/expected")"
stop go

start lisp_arm64 "$launcher"
# GetFeature first on its own, then every RPC: unary, server streaming,
# client streaming and bidi.
"$go_client" -addr "127.0.0.1:$port" -rpc get -timeout 60s >"$tmp/get" 2>&1 ||
  fail "GetFeature against the arm64 Lisp server: $(cat "$tmp/get")"
grep -q '"Berkshire Valley Management Area Trail, Jefferson, NJ, USA"' "$tmp/get" ||
  fail "unexpected GetFeature report: $(cat "$tmp/get")"
"$go_client" -addr "127.0.0.1:$port" -rpc all -points 200 -timeout 60s >"$tmp/got" 2>&1 ||
  fail "Go client against the arm64 Lisp server: $(cat "$tmp/got")"
stop lisp_arm64

# RouteChat's notes are per server, and the first report ran on a fresh
# server; so did this one, apart from the GetFeature calls, which store
# nothing.
diff -u "$tmp/expected" "$tmp/got" || fail "reports differ (- Go server, + arm64 Lisp server)"
echo "PASS: the arm64 Lisp server under qemu answers like the Go server"
cat "$tmp/got"
