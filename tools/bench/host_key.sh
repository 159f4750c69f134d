#!/usr/bin/env bash
# Prints one line that identifies this machine as a benchmark sees it: what makes two measurements
# comparable or not. Benchmark results record it, their build actions take it as an input (through
# Bazel's workspace status, tools/bench/workspace_status.sh), and the report refuses a ratio or a
# goal between results whose lines differ. Memory is rounded to whole GiB and the CPU model is
# taken as the kernel names it, so the line is stable across boots of one machine.
#
# Two machines of one kind still differ (a virtual machine's host, its neighbours), and one machine
# booted with other kernel parameters (mitigations, isolcpus, nohz) runs differently: so the line
# also names the machine, by a digest of /etc/machine-id (the identifier itself is not written
# anywhere, as machine-id(5) asks), and the boot, by a digest of /proc/cmdline.
#
#   cpu=Intel(R) Xeon(R) Processor (family 6, model 207, stepping 2);cpus=2;threads_per_core=1;sockets=1;smt=off;kernel=6.18.44;governor=none;mem_gib=24;virt=kvm;machine=3f9c0a1b2c3d4e5f;cmdline=0123456789abcdef
set -u
export LC_ALL=C

# digest FILE [SALT]: the first 16 hex digits of the SHA-256 of SALT and FILE's content, or
# "unknown" when FILE cannot be read.
digest() {
  local content
  content=$(cat "$1" 2>/dev/null) || content=""
  if [ -z "$content" ]; then
    echo unknown
    return
  fi
  printf '%s%s' "${2:-}" "$content" | sha256sum | cut -c1-16
}

cpu_model() {
  local m
  # A virtual machine's model name can be generic ("Intel(R) Xeon(R) Processor"): family, model and
  # stepping tell the host's CPU generations apart.
  m=$(awk -F': ' '/^model name/ && !n {n=$2} /^cpu family/ && !f {f=$2} /^model[[:space:]]*:/ && !m {m=$2}
    /^stepping/ && !s {s=$2} END {if (n != "") print n " (family " f ", model " m ", stepping " s ")"}' \
    /proc/cpuinfo 2>/dev/null)
  # arm64 kernels name no model: the implementer and part identify the core.
  [ -n "$m" ] || m=$(awk -F': ' '/^CPU implementer/ {i=$2} /^CPU part/ {p=$2} END {if (i != "") print "implementer " i " part " p}' /proc/cpuinfo 2>/dev/null)
  [ -n "$m" ] || m=$(uname -m)
  echo "$m"
}

# Online CPUs, and how they share cores and sockets.
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)
sys=/sys/devices/system/cpu
threads=$(tr ',' '\n' < "$sys/cpu0/topology/thread_siblings_list" 2>/dev/null |
  awk -F- 'NF == 2 {n += $2 - $1 + 1; next} NF == 1 {n++} END {print n + 0}')
sockets=$(cat "$sys"/cpu[0-9]*/topology/physical_package_id 2>/dev/null | sort -u | wc -l)
case $(cat "$sys/smt/active" 2>/dev/null) in
  1) smt=on ;;
  0) smt=off ;;
  *) smt=unknown ;;
esac
# Every CPU's governor: one that differs (a core left on powersave) changes what runs there.
governor=$(cat "$sys"/cpu[0-9]*/cpufreq/scaling_governor 2>/dev/null | sort -u | paste -sd+ -)
governor=${governor:-none}
mem_gib=$(awk '/^MemTotal:/ {printf "%d", $2 / 1048576 + 0.5}' /proc/meminfo 2>/dev/null)
# A virtual machine shares its host: its steal time and neighbours are part of every figure.
virt=$(systemd-detect-virt --vm 2>/dev/null) || virt=""
if [ -z "$virt" ] || [ "$virt" = none ]; then
  if grep -qw hypervisor /proc/cpuinfo 2>/dev/null; then virt=vm; else virt=none; fi
fi
# Salted with the project's name, so that the digest is of use to nothing else.
machine=$(digest /etc/machine-id grpcbench-host-key:)
cmdline=$(digest /proc/cmdline)
echo "cpu=$(cpu_model);cpus=$cpus;threads_per_core=${threads:-0};sockets=${sockets:-0};smt=$smt;kernel=$(uname -r);governor=$governor;mem_gib=${mem_gib:-0};virt=$virt;machine=$machine;cmdline=$cmdline"
