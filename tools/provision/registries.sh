# shellcheck shell=bash
# Where the package registries are, read from this machine's own configuration at run time.
# The repository never names a registry host; every location below comes from the host.

_provision_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# debian_mirror prints the Debian archive URI from the host's own apt sources (deb822 or one-line
# format), skipping security archives. DEBIAN_MIRROR overrides it.
debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then
    printf '%s\n' "${DEBIAN_MIRROR%/}"
    return
  fi
  local m
  m=$({
    sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null
    sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' \
      /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
  } | grep -v -- '-security' | head -n1)
  [ -n "$m" ] || return 1
  printf '%s\n' "${m%/}"
}

# go_proxy prints the first usable GOPROXY entry (GOPROXY in the environment, else `go env GOPROXY`).
go_proxy() {
  local list=${GOPROXY:-}
  if [ -z "$list" ] && command -v go >/dev/null 2>&1; then list=$(go env GOPROXY); fi
  local p
  for p in ${list//[,|]/ }; do
    case $p in direct | off | "") ;; *) printf '%s\n' "${p%/}"; return 0 ;; esac
  done
  echo "no Go module proxy configured: set GOPROXY or install go (its 'go env GOPROXY' is used)" >&2
  return 1
}

# go_module_path MODULE escapes a module path for the proxy protocol (an upper-case letter becomes
# '!' and the letter in lower case).
go_module_path() {
  printf '%s\n' "$1" | sed 's/[A-Z]/!&/g' | tr '[:upper:]' '[:lower:]'
}

# maven_repository prints the Maven repository that Maven itself would use for central: a mirror of
# central from the user's or the installation's settings.xml, else central's URL from Maven's super POM.
maven_repository() {
  if [ -n "${MAVEN_REPOSITORY:-}" ]; then printf '%s\n' "${MAVEN_REPOSITORY%/}"; return; fi
  command -v mvn >/dev/null 2>&1 || { echo "mvn not found: Maven's configuration names the Maven repository (or set MAVEN_REPOSITORY)" >&2; return 1; }
  python3 "$_provision_dir/maven_repository.py" "$(dirname "$(dirname "$(readlink -f "$(command -v mvn)")")")"
}
