# shellcheck shell=bash
# Bazel's process summary, the line "INFO: N processes: A kind, B kind." near the end of a build's
# log, which says where the build's processes ran: "internal", "linux-sandbox", "remote",
# "remote cache hit", "disk cache hit", ... Sourced by tools/repro and tools/rbe/ci, which check
# where a build's actions ran.

# process_summary LOG: the last summary line of LOG; fails, printing nothing, if LOG has none.
process_summary() {
  local line
  line=$(grep -E '^INFO: [0-9,]+ process(es)?[:.]' "$1" | tail -n 1)
  [ -n "$line" ] || return 1
  printf '%s\n' "$line"
}

# process_kinds SUMMARY: one "COUNT KIND" line per kind of process, COUNT without thousands
# separators should a Bazel print them ("INFO: 0 processes." has no line).
process_kinds() {
  sed -E 's/^INFO: [0-9,]+ process(es)?(: |\.$)//; s/\.$//; s/, /\n/g' <<< "$1" \
    | sed -E '/^$/d; :a; s/^([0-9]+),([0-9])/\1\2/; ta'
}

# process_count SUMMARY KIND: how many processes of KIND ran ("remote cache hit"), or in all for
# KIND "total"; 0 when the summary has no such kind.
process_count() {
  if [ "$2" = total ]; then
    sed -E 's/^INFO: ([0-9,]+) .*/\1/; s/,//g' <<< "$1"
  else
    process_kinds "$1" | awk -v kind="$2" '{n = $1; sub(/^[0-9]+ /, ""); if ($0 == kind) s += n} END {print s + 0}'
  fi
}
