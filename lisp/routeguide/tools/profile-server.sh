#!/bin/bash
# Profile a RouteGuide server under the Go load generator.
#
#   lisp/routeguide/tools/profile-server.sh OUT RPC CLIENTS [MODE] [SECONDS]
#   lisp/routeguide/tools/profile-server.sh -go OUT RPC CLIENTS [SECONDS]
#
# e.g. profile-server.sh /tmp/unary100.txt unary 100 cpu 8
# Runs the Lisp server from source (ASDF, profile-server.lisp) under sb-sprof on loopback, drives
# it with //go/routeguide/loadgen -server for one scenario (RPC: unary, server_streaming,
# client_streaming, bidi; CLIENTS: a count) and writes OUT (flat report, percentages of all
# samples of all threads) and OUT.graph. MODE is cpu or alloc. The load runs 1 s of warm-up plus
# SECONDS + 2; the profile covers SECONDS from the moment all connections are up.
# With -go, it profiles the Go server (//go/routeguide/server -cpuprofile) the same way and writes
# OUT.pprof (the whole run: start, warm-up and SECONDS of load) and OUT (pprof -top).
# The load generator pins the server and itself to different CPUs (-cpus auto), as the benchmarks
# do. SBCL, Go and the load generator come from Bazel, in the output base OUTPUT_BASE if set
# (tools/bazel's default otherwise).
set -euo pipefail
impl=lisp
if [ "${1:-}" = -go ]; then
  impl=go
  shift
fi
if [ $# -lt 3 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2
  exit 2
fi
out=$1 rpc=$2 clients=$3
if [ "$impl" = go ]; then
  mode=cpu seconds=${4:-8}
else
  mode=${4:-cpu} seconds=${5:-8}
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cd "$repo"
bazel=(tools/bazel)
[ -n "${OUTPUT_BASE:-}" ] && bazel+=(--output_base="$OUTPUT_BASE")

if [ "$impl" = go ]; then
  "${bazel[@]}" build //go/routeguide/loadgen //go/routeguide/server >&2
  execroot=$("${bazel[@]}" info execution_root 2>/dev/null)
  loadgen=$execroot/$("${bazel[@]}" cquery --output=files //go/routeguide/loadgen 2>/dev/null)
  server=$execroot/$("${bazel[@]}" cquery --output=files //go/routeguide/server 2>/dev/null)
  go=$("${bazel[@]}" info output_base 2>/dev/null)/external/rules_go~~go_sdk~main___host_0/bin/go
  echo "profiling the Go server: $rpc at $clients clients" >&2
  "$loadgen" -server "$server" -impl go -server_args "-cpuprofile $out.pprof" -rpcs "$rpc" \
      -clients "$clients" -duration "$((seconds + 2))s" -reps 1 -warmup 1s >&2
  "$go" tool pprof -top -nodecount=60 "$server" "$out.pprof" >"$out"
  exit 0
fi
"${bazel[@]}" build //go/routeguide/loadgen @sbcl_linux_amd64//:runtime @cl_libraries//:chipz >&2
# cquery prints execroot-relative paths; the workspace's bazel-out link may point elsewhere.
loadgen=$("${bazel[@]}" info execution_root 2>/dev/null)/$("${bazel[@]}" cquery --output=files //go/routeguide/loadgen 2>/dev/null)
sbcl_root=$("${bazel[@]}" info output_base 2>/dev/null)/external/_main~sbcl~sbcl_linux_amd64/root
export SBCL_HOME=$sbcl_root/usr/lib/sbcl
# ASDF finds clgrpc's libraries (chipz, salza2, ...) in the pinned Debian packages Bazel fetched, not
# in the host's /usr/share/common-lisp.
cl_source=$("${bazel[@]}" info output_base 2>/dev/null)/external/_main~sbcl~cl_libraries/root/usr/share/common-lisp/source
export CL_SOURCE_REGISTRY="(:source-registry (:tree \"$cl_source/\") :ignore-inherited-configuration)"

# The first run compiles clgrpc and routeguide (ASDF's cache), which takes a minute or two: done
# here, before the load generator starts the server and waits for it.
"$sbcl_root/usr/bin/sbcl" --script "$here/profile-server.lisp"
# The load generator starts the server as it starts the server program, with -addr, waits for it to
# announce its address, and stops it (SIGTERM) once the scenario is done; a wrapper supplies the
# profile's arguments.
wrapper=$(mktemp)
trap 'rm -f "$wrapper"' EXIT
{
  echo '#!/usr/bin/env bash'
  printf 'exec %q --script %q %q %q %q "$@"\n' \
    "$sbcl_root/usr/bin/sbcl" "$here/profile-server.lisp" "$out" "$mode" "$seconds"
} >"$wrapper"
chmod +x "$wrapper"
echo "profiling $rpc at $clients clients" >&2
"$loadgen" -server "$wrapper" -impl lisp -rpcs "$rpc" -clients "$clients" \
    -duration "$((seconds + 2))s" -reps 1 -warmup 1s >&2
