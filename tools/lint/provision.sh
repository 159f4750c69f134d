# shellcheck shell=bash
# The lint phase's tools, provisioned like tools/bazel's (tools/provision/provision.sh, which this
# sources): pinned, checked, cached in $XDG_CACHE_HOME/grpcbench/lint/<tool>-<key>/, each directory
# made under a temporary name and marked complete. Kept apart from tools/provision so that a change
# here does not change the key of the module overrides every Bazel run uses. Sourced by
# tools/lint/lint.

# shellcheck source=../provision/provision.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../provision/provision.sh"

# _provision_buildifier: buildifier built from the Go module version tools/lint/buildifier pins
# (its go.sum checks every module), into lint/buildifier-<key>/; sets BUILDIFIER.
_provision_buildifier() {
  local mod=$WORKSPACE_DIR/tools/lint/buildifier key dir proxy
  key=$( { cat "$mod/go.mod" "$mod/go.sum"; echo "$GO_SDK"; } | _key)
  dir=$CACHE/lint/buildifier-$key
  # shellcheck disable=SC2034 # read by tools/lint/lint
  BUILDIFIER=$dir/buildifier
  [ -f "$dir/.complete" ] && return
  _log "building buildifier from its Go module"
  proxy=$(go_proxy) || _die "no Go module proxy configured (set GOPROXY)"
  rm -rf "$dir" "$dir.tmp" && mkdir -p "$dir.tmp"
  (cd "$mod" && env GOMODCACHE="$CACHE/gomod" GOFLAGS=-mod=readonly GOTOOLCHAIN=local GOWORK=off \
    GOPROXY="$proxy" CGO_ENABLED=0 "$GO_SDK/bin/go" build -trimpath -o "$dir.tmp/buildifier" \
    github.com/bazelbuild/buildtools/buildifier) || _die "building buildifier failed"
  mv "$dir.tmp" "$dir" && touch "$dir/.complete"
}

# _provision_shellcheck: Debian's shellcheck and the libraries it links (artifacts.lock, set
# "shellcheck"), unpacked into lint/shellcheck-<key>/; sets SHELLCHECK_ROOT. It runs on the
# host's libc (glibc >= 2.34), as the amd64 SBCL does.
_provision_shellcheck() {
  local lines key dir debs
  lines=$(_lock_lines deb shellcheck)
  [ -n "$lines" ] || _die "artifacts.lock pins no shellcheck set"
  key=$(_key <<< "$lines")
  dir=$CACHE/lint/shellcheck-$key
  # shellcheck disable=SC2034 # read by tools/lint/lint
  SHELLCHECK_ROOT=$dir
  [ -f "$dir/.complete" ] && return
  _log "fetching ShellCheck"
  debs=$(_fetch_set deb shellcheck | awk '{print $2}') || exit 1
  rm -rf "$dir" "$dir.tmp" && mkdir -p "$dir.tmp"
  printf '%s\n' "$debs" | xargs -I{} dpkg-deb -x {} "$dir.tmp" || _die "unpacking the shellcheck set failed"
  mv "$dir.tmp" "$dir" && touch "$dir/.complete"
}

# provision_lint_tools WORKSPACE_DIR: sets GO_SDK, BUILDIFIER and SHELLCHECK_ROOT, provisioning
# what is missing, under provision's lock (two runs sharing a cache never build into one place).
provision_lint_tools() {
  WORKSPACE_DIR=$1
  CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/grpcbench
  case $(uname -sm) in
    "Linux x86_64") ;;
    *) _die "the lint tools are provisioned for linux x86_64 hosts" ;;
  esac
  _check_host_tools
  mkdir -p "$CACHE/lint"
  exec 9> "$CACHE/.provision.lock"
  flock 9
  _provision_go_sdk
  _provision_buildifier
  _provision_shellcheck
  flock -u 9
  exec 9>&-
}
