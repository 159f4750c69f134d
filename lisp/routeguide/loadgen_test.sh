#!/usr/bin/env bash
# The Lisp client of the RouteGuide benchmarks, driven by the Go load
# generator (-lisp_client), and the Lisp program's own behaviour (not their
# speed): both servers measured in turns with every RPC kind, results the
# repository's validator accepts, a dead server, a broken client and a server
# that answers wrongly reported as failed scenarios, protocol errors
# answered, bad command lines refused:
#   loadgen_test.sh GO_LOADGEN LISP_LOADGEN GO_SERVER LISP_SERVER BENCHVALIDATE
set -euo pipefail
loadgen="$1" lisp_client="$2" go_server="$3" lisp_server="$4" validate="$5"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck disable=SC2054 # "1,3" is one argument, a comma list of client counts
quick=(-clients 1,3 -duration 200ms -reps 2 -warmup 20)

# Both servers in turns, every kind at 1 and 3 clients: 16 "ok" results named
# IMPL/KIND/clients=N/client=lisp, two benchfmt lines each, the client and its
# binary recorded.
"$loadgen" -server "$go_server" -rival "$lisp_server" -rival_impl lisp -lisp_client "$lisp_client" \
  "${quick[@]}" -out "$tmp/both.json" -benchfmt "$tmp/both.txt" >"$tmp/both.out" 2>"$tmp/both.err" ||
  fail "both servers: exit $?: $(cat "$tmp/both.err")"
"$validate" "$tmp/both.json" || fail "both servers: invalid results"
for impl in go lisp; do
  for kind in unary server_streaming client_streaming bidi_streaming; do
    for n in 1 3; do
      name="$impl/$kind/clients=$n/client=lisp"
      grep -q "| $name | ok |" "$tmp/both.out" || fail "no ok row for $name in: $(cat "$tmp/both.out")"
      [[ $(grep -cE "^BenchmarkRouteguide/$name(-[0-9]+)?"$'\t'" +[0-9]+"$'\t'".* ns/op"$'\t'".* B/op"$'\t'".* req/s"$'\t'".* latency-p99-ns" "$tmp/both.txt") == 2 ]] ||
        fail "want 2 benchfmt lines for $name in: $(cat "$tmp/both.txt")"
    done
  done
done
[[ $(grep -o '"status": *"ok"' "$tmp/both.json" | wc -l) == 16 ]] || fail "want 16 ok results"
field() { sed -n "s/.*\"$2\": *\"\([^\"]*\)\".*/\1/p" "$1" | head -1; }
[[ $(field "$tmp/both.json" client) == lisp ]] || fail "the client is not recorded"
[[ $(field "$tmp/both.json" client_sha256) == $(sha256sum "$lisp_client" | cut -d' ' -f1) ]] ||
  fail "client_sha256 $(field "$tmp/both.json" client_sha256) is not the Lisp client's"
[[ $(field "$tmp/both.json" sbcl_version) == SBCL* ]] || fail "no sbcl_version"
# The Lisp client's readings are whole: every repetition has CPU time and
# latencies, and SBCL counts no allocations.
grep -q '"name": *"client_cpu_per_op"' "$tmp/both.json" || fail "no client_cpu_per_op"
grep -q '"name": *"latency_p99"' "$tmp/both.json" || fail "no latency_p99"
! grep -q '"name": *"allocs_per_op"' "$tmp/both.json" || fail "allocs_per_op, which the Lisp client does not count"

# An open loop: the calls are due on a schedule and the scenario says so.
"$loadgen" -server "$go_server" -lisp_client "$lisp_client" -rpcs unary -clients 2 -rate 500 \
  -duration 200ms -reps 1 -warmup 0 -out "$tmp/open.json" >"$tmp/open.out" 2>"$tmp/open.err" ||
  fail "open loop: exit $?: $(cat "$tmp/open.err")"
grep -q "| go/unary/clients=2/rate=500/client=lisp | ok |" "$tmp/open.out" || fail "open loop: $(cat "$tmp/open.out")"

# A server that exits at once: every scenario failed, exit 1, a valid file.
status=0
"$loadgen" -server /bin/false -lisp_client "$lisp_client" "${quick[@]}" -out "$tmp/false.json" \
  >"$tmp/false.out" 2>"$tmp/false.err" || status=$?
[[ $status == 1 ]] || fail "a dead server: exit $status, want 1"
"$validate" "$tmp/false.json" || fail "a dead server: invalid results"
[[ $(grep -o '"status": *"error"' "$tmp/false.json" | wc -l) == 8 ]] || fail "a dead server: want 8 error results"

# A client program that does not answer: every scenario failed, naming it.
status=0
"$loadgen" -server "$go_server" -lisp_client /bin/true -rpcs unary -clients 1 -duration 100ms -reps 1 \
  -out "$tmp/true.json" >"$tmp/true.out" 2>"$tmp/true.err" || status=$?
[[ $status == 1 ]] || fail "a silent client: exit $status, want 1"
# It may exit before or after the command is written: no reply, or a broken pipe.
grep -Eq 'the Lisp client /bin/true: (no reply to version|sending version: .*broken pipe) \(the Lisp client exited: exit status 0\)' "$tmp/true.json" ||
  fail "a silent client: $(cat "$tmp/true.json")"

# A server that answers wrongly (its database names the client's known point otherwise): every
# call fails its check, and the scenario's error is the check's own words.
cat >"$tmp/wrong_db.json" <<'JSON'
{"feature": [{"location": {"latitude": 409146138, "longitude": -746188906}, "name": "Somewhere else"}]}
JSON
cat >"$tmp/wrong_server" <<SH
#!/usr/bin/env bash
exec "$(realpath "$go_server")" -db "$tmp/wrong_db.json" "\$@"
SH
chmod +x "$tmp/wrong_server"
status=0
"$loadgen" -server "$tmp/wrong_server" -lisp_client "$lisp_client" -rpcs unary -clients 1 -duration 100ms \
  -reps 1 -warmup 0 -out "$tmp/wrong.json" >"$tmp/wrong.out" 2>"$tmp/wrong.err" || status=$?
[[ $status == 1 ]] || fail "a wrong server: exit $status, want 1"
grep -q 'GetFeature: got \\"Somewhere else\\" at (409146138, -746188906), want \\"Berkshire Valley' "$tmp/wrong.json" ||
  fail "a wrong server: the check's words are not the error: $(cat "$tmp/wrong.json")"

# The Lisp program alone: an answer to every line, errors included, and
# exit 0 at the end of its input.
deep=$(printf '[%.0s' {1..20000})
long=$(printf 'x%.0s' {1..70000})
replies=$(printf '%s\n' '{"command":"version"}' 'garbage' '[1,2]' '{"command":"fly"}' \
  '{"command":"measure","cell":7,"duration_ns":1000}' "$deep" "$long" '{"command":1.5.3}' '{"command":01}' \
  '{"command":"start","cell":7}' \
  '{"command":"open","cell":1,"host":"127.0.0.1","port":1,"rpc":"unary","clients":1,"conns":"shared","stream_msgs":1,"call_timeout_ms":1000}' \
  '{"command":"open","cell":1,"host":"127.0.0.1","port":80,"rpc":"unary","clients":0,"conns":"shared","stream_msgs":1,"call_timeout_ms":1000}' |
  "$lisp_client" 2>"$tmp/agent.err") || fail "the Lisp client: exit $?: $(cat "$tmp/agent.err")"
# Each reply, or the start of it where it names a version or a socket error.
want=(
  '{"ok":true,"sbcl_version":"SBCL '
  '{"error":"not JSON: JSON: unexpected character at offset 0"}'
  '{"error":"a command is a JSON object"}'
  '{"error":"unknown command \"fly\" (want open, warm_up, measure, start, latencies, close or version)"}'
  '{"error":"cell 7 is not open"}'
  '{"error":"not JSON: JSON: nested too deeply at offset 65"}'
  '{"error":"a command line longer than 65536 characters"}'
  '{"error":"not JSON: JSON: expected , at offset 14"}'
  '{"error":"not JSON: JSON: leading zero at offset 12"}'
  '{"error":"cell 7 is not open"}'
  '{"error":"connecting to 127.0.0.1:1: '
  '{"error":"field \"clients\": want a client count from 1 to 10000, got 0"}'
)
mapfile -t got <<< "$replies"
[[ ${#got[@]} == "${#want[@]}" ]] || fail "the Lisp client: ${#got[@]} replies, want ${#want[@]}: $replies"
for i in "${!want[@]}"; do
  [[ ${got[i]} == "${want[i]}"* ]] || fail "the Lisp client's reply $((i + 1)): ${got[i]}, want ${want[i]}"
done

# Bad command lines: exit 2, the problem and the usage on stderr.
for args in "-bogus" "extra"; do
  status=0
  "$lisp_client" "$args" </dev/null >/dev/null 2>"$tmp/usage.err" || status=$?
  [[ $status == 2 ]] || fail "the Lisp client '$args': exit $status, want 2"
  grep -q "^usage: loadgen" "$tmp/usage.err" || fail "the Lisp client '$args': no usage in: $(cat "$tmp/usage.err")"
done
status=0
"$loadgen" -server "$go_server" -lisp_client /nonexistent >/dev/null 2>"$tmp/usage.err" || status=$?
[[ $status == 2 ]] || fail "-lisp_client /nonexistent: exit $status, want 2"
grep -q "^-lisp_client: " "$tmp/usage.err" || fail "-lisp_client /nonexistent: $(cat "$tmp/usage.err")"
echo PASS
