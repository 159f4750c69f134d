#!/bin/bash
# What a unary call costs the Lisp RouteGuide server, its handler handed off to the executor (the
# default) against run inline on the reactor (-unary_inline), counted by the kernel.
#
#   lisp/clgrpc/perf/handoff-cost.sh [CLIENTS] [SECONDS]
#
# For each mode it starts //lisp/routeguide:server on CPU 0 and //go/routeguide/loadgen on CPU 1
# (GetFeature, CLIENTS callers on connections of their own, 10 by default), and after 2 s of load
# counts the server's task clock, context switches and system calls with `perf stat` for SECONDS
# (3 by default). It prints each per call, the calls taken from the load generator's rate. It
# needs root (perf's syscall tracepoints) and two CPUs; servers listen on loopback only.
set -euo pipefail
clients=${1:-10}
seconds=${2:-3}
cd "$(dirname "$0")/../../.."
tools/bazel build //lisp/routeguide:server //go/routeguide/loadgen >/dev/null 2>&1
bin=$(tools/bazel info bazel-bin 2>/dev/null)
server=$bin/lisp/routeguide/server
loadgen=$bin/go/routeguide/loadgen/loadgen_/loadgen
events=task-clock,context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_futex,syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT

printf '| mode | calls/s | CPU µs/call | syscalls/call | futex/call | send/call | recv/call | switches/call |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for mode in handoff inline; do
  args=()
  [ "$mode" = inline ] && args=(-unary_inline)
  taskset -c 0 "$server" -addr 127.0.0.1:0 "${args[@]}" >"$tmp/server.out" 2>/dev/null &
  pid=$!
  for _ in $(seq 100); do
    grep -q '^listening on ' "$tmp/server.out" && break
    sleep 0.1
  done
  addr=$(sed -n 's/^listening on //p' "$tmp/server.out")
  taskset -c 1 "$loadgen" -addr "$addr" -rpcs unary -clients "$clients" \
    -duration "$((seconds + 3))s" -reps 1 -warmup 0 >"$tmp/loadgen.out" 2>&1 &
  lg=$!
  sleep 2
  perf stat -x, -e "$events" -p "$pid" -- sleep "$seconds" 2>"$tmp/perf.csv"
  wait "$lg" || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rate=$(sed -nE 's/.* ([0-9]+) req\/s.*/\1/p' "$tmp/loadgen.out" | tail -1)
  awk -F, -v rate="$rate" -v s="$seconds" -v mode="$mode" '
    { v[$3] = $1 }
    END {
      calls = rate * s
      printf "| %s | %d | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", mode, rate,
        v["task-clock"] * 1000 / calls, v["raw_syscalls:sys_enter"] / calls,
        v["syscalls:sys_enter_futex"] / calls, v["syscalls:sys_enter_sendto"] / calls,
        v["syscalls:sys_enter_recvfrom"] / calls, v["context-switches"] / calls
    }' "$tmp/perf.csv"
done
