# shellcheck shell=bash
# A private, rootless apt state for Debian suites the host does not track (sid, and foreign
# architectures). Sourced by update_lock.sh; the launcher itself never needs apt: it downloads the
# exact files the lock names.

# shellcheck source=registries.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/registries.sh"

# apt_private DIR SUITE ARCH... sets the array APT_OPTS to an apt state in DIR that knows only SUITE
# (main) for the given architectures and has nothing installed.
apt_private() {
  local dir=$1 suite=$2 mirror
  shift 2
  mirror=$(debian_mirror) || { echo "no Debian mirror in the host's apt sources; set DEBIAN_MIRROR" >&2; return 1; }
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
  echo "deb $mirror $suite main" > "$dir/sources.list"
  : > "$dir/status"
  APT_OPTS=(-o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o Dir::State::status="$dir/status"
    -o Dir::Etc::preferences=/dev/null -o Dir::Etc::preferencesparts=/dev/null
    -o Debug::NoLocking=1 -o Acquire::Languages=none
    # The mirror's sid Release file is past its Valid-Until date; the lock's sha256 is what we trust.
    -o Acquire::Check-Valid-Until=false
    -o APT::Architecture="$1")
  local a
  for a in "$@"; do APT_OPTS+=(-o APT::Architectures::="$a"); done
}
