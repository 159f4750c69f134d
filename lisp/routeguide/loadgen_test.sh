#!/usr/bin/env bash
# The Lisp load generator's behaviour (not its speed): it measures the Go and
# the Lisp server with every RPC kind, writes results that the repository's
# validator accepts, reports a server that fails as failed scenarios, and
# rejects a bad command line:
#   loadgen_test.sh LOADGEN GO_SERVER LISP_SERVER BENCHVALIDATE
set -euo pipefail
loadgen="$1" go_server="$2" lisp_server="$3" validate="$4"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck disable=SC2054 # "1,3" is one argument, a comma list of client counts
quick=(-clients 1,3 -duration 200ms -reps 2 -warmup 20)

# measure NAME SERVER IMPL: a quick grid against SERVER, which must succeed
# and give 8 valid "ok" results named IMPL/KIND/clients=N/client=lisp, and
# the same in the Go benchmark format, one line per repetition.
measure() {
  local name="$1" server="$2" impl="$3"
  "$loadgen" -server "$server" -impl "$impl" "${quick[@]}" -out "$tmp/$name.json" -benchfmt "$tmp/$name.txt" \
    >"$tmp/$name.out" 2>"$tmp/$name.err" || fail "$name: exit $?: $(cat "$tmp/$name.err")"
  "$validate" "$tmp/$name.json" || fail "$name: invalid results"
  for kind in unary server_streaming client_streaming bidi_streaming; do
    for n in 1 3; do
      grep -q "| $impl/$kind/clients=$n/client=lisp | ok |" "$tmp/$name.out" ||
        fail "$name: no ok row for $impl/$kind/clients=$n/client=lisp in: $(cat "$tmp/$name.out")"
      [[ $(grep -cE "^BenchmarkRouteguide/$impl/$kind/clients=$n/client=lisp(-[0-9]+)?"$'\t'" +[0-9]+"$'\t'".* ns/op"$'\t'".* B/op"$'\t'".* req/s"$'\t'".* latency-p99-ns" "$tmp/$name.txt") == 2 ]] ||
        fail "$name: want 2 benchfmt lines for $impl/$kind/clients=$n in: $(cat "$tmp/$name.txt")"
    done
  done
  [[ $(grep -o '"status":"ok"' "$tmp/$name.json" | wc -l) == 8 ]] || fail "$name: want 8 ok results"
  grep -q '"client":"lisp"' "$tmp/$name.json" || fail "$name: the client is not recorded"
  for header in "goos: linux" "goarch: amd64" "pkg: github.com/grpcbench/grpcbench/lisp/routeguide/loadgen" "cpu: "; do
    grep -q "^$header" "$tmp/$name.txt" || fail "$name: no '$header' line in: $(cat "$tmp/$name.txt")"
  done
}
measure go "$go_server" go
measure lisp "$lisp_server" lisp

# The results name the binaries measured by their SHA-256, as sha256sum
# computes it, and a server started with -server_args records them.
digest_of() { sed -n "s/.*\"$2\":\"\([0-9a-f]*\)\".*/\1/p" "$1"; }
[[ $(digest_of "$tmp/go.json" server_sha256) == $(sha256sum "$go_server" | cut -d' ' -f1) ]] ||
  fail "go: server_sha256 $(digest_of "$tmp/go.json" server_sha256) is not the Go server's"
[[ $(digest_of "$tmp/lisp.json" binary_sha256) =~ ^[0-9a-f]{64}$ ]] || fail "lisp: no binary_sha256"
"$loadgen" -server "$lisp_server" -server_args "-unary_inline" -impl lisp_tuned -rpcs unary -clients 1 \
  -duration 100ms -reps 1 -warmup 0 -out "$tmp/tuned.json" >"$tmp/tuned.out" 2>"$tmp/tuned.err" ||
  fail "tuned: exit $?: $(cat "$tmp/tuned.err")"
grep -q '"server_args":"-unary_inline"' "$tmp/tuned.json" || fail "tuned: server_args not recorded"
grep -q '"status":"ok"' "$tmp/tuned.json" || fail "tuned: the server with -unary_inline failed"

# -rival: both servers measured in the same scenario, one repetition each in
# turn, the first turn rotating; the results name both and record the rival.
"$loadgen" -server "$go_server" -rival "$lisp_server" -rival_impl lisp -rpcs unary -clients 1 \
  -duration 100ms -reps 3 -warmup 0 -out "$tmp/rival.json" >"$tmp/rival.out" 2>"$tmp/rival.err" ||
  fail "rival: exit $?: $(cat "$tmp/rival.err")"
"$validate" "$tmp/rival.json" || fail "rival: invalid results"
order=$(sed -n 's|^\[routeguide\] \([a-z]*\)/unary/clients=1/client=lisp, round [0-9]/3 rep 1/1:.*|\1|p' "$tmp/rival.err" | tr '\n' ' ')
[[ $order == "go lisp lisp go go lisp " ]] || fail "rival: turns in the order '$order': $(cat "$tmp/rival.err")"
for impl in go lisp; do
  grep -q "| $impl/unary/clients=1/client=lisp | ok |" "$tmp/rival.out" || fail "rival: no ok row for $impl"
done
grep -q '"rival_server":"lisp server server"' "$tmp/rival.json" || fail "rival: rival_server not recorded"
[[ $(digest_of "$tmp/rival.json" rival_server_sha256) == $(sha256sum "$lisp_server" | cut -d' ' -f1) ]] ||
  fail "rival: rival_server_sha256 is not the Lisp server's"

# The digest at the sizes where SHA-256's padding changes shape: a "server"
# that exits at once, padded to each size, still has its digest recorded.
for size in 55 56 63 64 65 119 120 65536 65600; do
  script="$tmp/server_$size"
  printf '#!/bin/sh\nexit 1\n#' >"$script"
  head -c $((size - 18)) /dev/zero | tr '\0' x >>"$script"
  chmod +x "$script"
  [[ $(wc -c <"$script") == "$size" ]] || fail "padding $script to $size bytes"
  "$loadgen" -server "$script" -rpcs unary -clients 1 -reps 1 -warmup 0 -out "$tmp/size.json" \
    >/dev/null 2>&1 || true
  [[ $(digest_of "$tmp/size.json" server_sha256) == $(sha256sum "$script" | cut -d' ' -f1) ]] ||
    fail "the SHA-256 of a $size-byte file: $(digest_of "$tmp/size.json" server_sha256)"
done

# A server that exits at once: every scenario is reported as failed, exit 1,
# and the results are still a valid file.
status=0
"$loadgen" -server /bin/false "${quick[@]}" -out "$tmp/false.json" >"$tmp/false.out" 2>"$tmp/false.err" || status=$?
[[ $status == 1 ]] || fail "a dead server: exit $status, want 1"
"$validate" "$tmp/false.json" || fail "a dead server: invalid results"
[[ $(grep -o '"status":"error"' "$tmp/false.json" | wc -l) == 8 ]] || fail "a dead server: want 8 error results"

# Bad command lines: exit 2, the problem and the usage on stderr.
for args in "-bogus" "-server $go_server -addr 127.0.0.1:1" "-addr 10.0.0.1:80" \
            "-server $go_server -rpcs unary,nope" "-server $go_server -clients 0" \
            "-server $go_server -conns many" "-addr 127.0.0.1:1 -server_args -x" \
            "-server $go_server -rival $lisp_server" "-server $go_server -rival $lisp_server -rival_impl go" \
            "-addr 127.0.0.1:1 -rival $lisp_server -rival_impl lisp" "-server $go_server -rival_impl lisp" ""; do
  status=0
  # shellcheck disable=SC2086 # split on purpose
  "$loadgen" $args >/dev/null 2>"$tmp/usage.err" || status=$?
  [[ $status == 2 ]] || fail "'$args': exit $status, want 2"
  grep -q "^usage: loadgen (-server PATH | -addr HOST:PORT) \[flags\]" "$tmp/usage.err" ||
    fail "'$args': no usage in: $(cat "$tmp/usage.err")"
done
echo PASS
