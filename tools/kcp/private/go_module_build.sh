#!/usr/bin/env bash
# The action of go_module_binary (go_module_binary.bzl): builds one package of a Go module of its
# own, offline, pure Go, with version stamps, and nothing left behind.
#
#   go_module_build.sh GO ROOT_FILE GOOS GOARCH SRC_TAR PROXY_TAR PACKAGE OUT [PKG.VAR=VALUE ...]
#
# Everything `go` writes (the module cache, the build cache, its config) goes to a scratch
# directory that is removed on exit: the action's only output is OUT. -trimpath and a fixed
# environment make OUT the same bytes wherever the action runs.
set -euo pipefail

[ $# -ge 8 ] || { echo "usage: go_module_build.sh GO ROOT_FILE GOOS GOARCH SRC_TAR PROXY_TAR PACKAGE OUT [PKG.VAR=VALUE ...]" >&2; exit 2; }
go=$1 root_file=$2 goos=$3 goarch=$4 src_tar=$5 proxy_tar=$6 package=$7 out=$8
shift 8

here=$PWD
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$here/$1" ;; esac; }
go=$(abs "$go")
out=$(abs "$out")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/go_module_build.XXXXXX")
# The module cache is read-only once extracted; make it removable first.
cleanup() { chmod -R u+w "$scratch" 2>/dev/null || true; rm -rf "$scratch"; }
trap cleanup EXIT
mkdir -p "$scratch/src" "$scratch/proxy" "$scratch/home" "$scratch/tmp"
tar -xf "$src_tar" -C "$scratch/src"
tar -xf "$proxy_tar" -C "$scratch/proxy"

# -s drops the symbol table and debug information from the binary, so the compiler need not make
# DWARF at all (395 s became 367 s here, one build each).
ldflags=-s
gcflags=all=-dwarf=false
for def in "$@"; do
  ldflags+=" -X '$def'"
done

# env -i: nothing of the host's environment reaches `go` but what is set here. The SDK is the
# toolchain's (GOROOT); modules come only from the tarred proxy, and the main module's go.sum must
# pin each of them (-mod=readonly, no checksum database). -p 2 compiles two packages at a time, more
# than the one core the action claims (go_module_binary.bzl says why). TMPDIR keeps go's work
# directory in the scratch too. `go` says "downloading" for every module it unpacks: its output is
# shown only when the build fails.
cd "$scratch/src"
if ! env -i \
  PATH=/usr/bin:/bin \
  HOME="$scratch/home" TMPDIR="$scratch/tmp" \
  GOROOT="$(cd "$(dirname "$root_file")" && pwd)" \
  GOOS="$goos" GOARCH="$goarch" CGO_ENABLED=0 \
  GOPATH="$scratch/gopath" GOMODCACHE="$scratch/gomod" GOCACHE="$scratch/gocache" \
  GOPROXY="file://$scratch/proxy" GOSUMDB=off GOFLAGS=-mod=readonly \
  GOTOOLCHAIN=local GOWORK=off GOENV=off GOTELEMETRY=off \
  "$go" build -p 2 -trimpath -buildvcs=false -gcflags="$gcflags" -ldflags="$ldflags" -o "$out" "$package" > "$scratch/build.log" 2>&1; then
  cat "$scratch/build.log" >&2
  echo "go_module_build.sh: go build $package failed" >&2
  exit 1
fi
