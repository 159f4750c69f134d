# shellcheck shell=bash
# Helpers shared by tools/rbe/{up,down,ci}.

log() { printf '[tools/rbe] %s\n' "$*" >&2; }
die() { printf '[tools/rbe] ERROR: %s\n' "$*" >&2; exit 1; }

# rbe_pointer PORT_BASE: the file that records the state directory of the farm on that port, so
# that tools/rbe/down finds it from any shell. One per user and port.
rbe_pointer() { printf '%s/grpcbench-rbe-%s-%s.state\n' "${TMPDIR:-/tmp}" "$(id -u)" "$1"; }

# port_open PORT: whether something accepts TCP connections on 127.0.0.1:PORT.
port_open() { (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }

# ours PID NAME: whether PID is still our bb_NAME (and not an unrelated process that reused the PID).
ours() {
  local exe
  exe=$(readlink "/proc/$1/exe" 2> /dev/null) || return 1
  [[ $exe == */bb_$2 ]]
}

# farm_alive STATE: whether any process that tools/rbe/up recorded in STATE/pids still runs. A
# record without one is left over from a farm that died with its machine session or a kill -9.
farm_alive() {
  local name pid
  [ -f "$1/pids" ] || return 1
  while read -r name pid; do
    if ours "$pid" "$name"; then return 0; fi
  done < "$1/pids"
  return 1
}
