# shellcheck shell=bash
# Provisions the pinned, offline Bazel toolchain into a per-user cache. Sourced by tools/bazel.
#
# Everything comes from package registries (Debian, the Go module proxy, Maven Central), located
# through this machine's own configuration (registries.sh), and every file is checked against
# artifacts.lock before use. Layout of the cache ($XDG_CACHE_HOME/grpcbench, else ~/.cache/grpcbench):
#
#   downloads/<sha256>       every fetched file, content-addressed; never fetched twice
#   bazel/<key>/             Debian sid's bazel-bootstrap 7.7.1 + JDK, relocated (relocate_bazel.sh)
#   go/<version>/            the Go SDK named by go.mod's toolchain line
#   gomod/                   the Go module cache that go_deps (gazelle) downloads into
#   gocache/, gopath/        the Go build cache and GOPATH of gazelle's repository tools (and of
#                            every go_deps repository's go.env, and the fetch scripts' go list)
#   gen/<key>/               the override modules and the generated offline.bazelrc
#   disk-cache/              Bazel's --disk_cache, shared by every workspace (size-capped)
#
# Each directory is built under a temporary name and renamed into place, so an interrupted run
# leaves nothing half-made, and each is keyed by the lock lines and sources it was made from, so a
# change to either makes a new one.

_provision_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=registries.sh
. "$_provision_dir/registries.sh"
# shellcheck source=relocate_bazel.sh
. "$_provision_dir/relocate_bazel.sh"

_log() { printf '[tools/bazel] %s\n' "$*" >&2; }
_die() { printf '[tools/bazel] ERROR: %s\n' "$*" >&2; exit 1; }

# _lock_lines KIND SET: the lock's lines for one set, as "name version sha256 path".
_lock_lines() {
  awk -F'\t' -v k="$1" -v s="$2" '$1 == k && $2 == s {print $3, $4, $5, $6}' "$_provision_dir/artifacts.lock"
}

_key() { sha256sum | cut -c1-16; }

# _registry KIND prints the base URL for a kind of artifact (cached per run).
declare -A _registry_url
_registry() {
  if [ -z "${_registry_url[$1]:-}" ]; then
    case $1 in
      deb) _registry_url[deb]=$(debian_mirror) || _die "no Debian mirror in the host's apt sources (set DEBIAN_MIRROR)" ;;
      go) _registry_url[go]=$(go_proxy) || _die "no Go module proxy configured (set GOPROXY)" ;;
      maven) _registry_url[maven]=$(maven_repository) || _die "no Maven repository configured (set MAVEN_REPOSITORY)" ;;
    esac
  fi
  printf '%s\n' "${_registry_url[$1]}"
}

# _fetch KIND NAME VERSION SHA256 PATH prints the cached file, downloading and verifying it first.
_fetch() {
  local kind=$1 name=$2 version=$3 sha=$4 path=$5
  local dest=$CACHE/downloads/$sha
  if [ ! -f "$dest" ]; then
    mkdir -p "$CACHE/downloads"
    local base tmp
    base=$(_registry "$kind") || exit 1
    tmp=$(mktemp "$dest.XXXXXX")
    if ! curl -fsSL --retry 3 --connect-timeout 20 -o "$tmp" "$base/$path"; then
      rm -f "$tmp"
      _die "cannot fetch $kind package $name $version ($path) from the configured $kind registry"
    fi
    if [ "$(sha256sum < "$tmp" | cut -c1-64)" != "$sha" ]; then
      rm -f "$tmp"
      _die "sha256 mismatch for $kind package $name $version: the registry serves other bytes than artifacts.lock pins"
    fi
    mv "$tmp" "$dest"
  fi
  printf '%s\n' "$dest"
}

# _fetch_set KIND SET prints "name file" for every artifact of a set, fetching them as needed.
_fetch_set() {
  local name version sha path
  local lines f
  lines=$(_lock_lines "$1" "$2")
  while read -r name version sha path; do
    [ -n "$name" ] || continue
    f=$(_fetch "$1" "$name" "$version" "$sha" "$path") || return 1
    printf '%s %s\n' "$name" "$f"
  done <<< "$lines"
}

# _unzip_module ZIP DEST: a Go proxy module zip (entries prefixed "module@version/") into DEST,
# writable, with exec bits on scripts restored (module zips do not keep modes).
_unzip_module() {
  local tmp
  tmp=$(mktemp -d "$2.XXXXXX")
  unzip -q "$1" -d "$tmp"
  local root
  root=$(find "$tmp" -mindepth 1 -maxdepth 5 -type d -name '*@*' | head -n1)
  [ -n "$root" ] || _die "unexpected layout in module zip $1"
  mv "$root" "$2"
  rm -rf "$tmp"
  chmod -R u+w "$2"
  find "$2" -type f \( -name '*.sh' -o -name '*.bash' \) -exec chmod +x {} +
}

# _go_module_download DIR MODULE VERSION SUM: fetches one module through the Go proxy (GOPROXY and
# GOMODCACHE as the caller exports them), running `go` in DIR (outside any module), checks its h1:
# hash against SUM (the go.sum form `go mod download -json` prints) and prints its directory in the
# module cache. The download is refused if the hash differs.
_go_module_download() {
  local json dir sum
  json=$(cd "$1" && go mod download -json "$2@$3") || _die "go mod download $2@$3 failed"
  dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<< "$json")
  sum=$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' <<< "$json")
  [ "$sum" = "$4" ] || _die "$2@$3 has hash $sum, the lock pins $4"
  [ -d "$dir" ] || _die "go mod download $2@$3 gave no directory"
  printf '%s\n' "$dir"
}

_provision_bazel() {
  local key
  key=$( { _lock_lines deb bazel; cat "$_provision_dir/relocate_bazel.sh" "$_provision_dir/rewrite_jar_manifests.py"; } | _key)
  BAZEL_PREFIX=$CACHE/bazel/7.7.1-$key
  [ -f "$BAZEL_PREFIX/.complete" ] && return
  local n
  n=$(_lock_lines deb bazel | wc -l)
  _log "fetching Bazel 7.7.1 from Debian sid: $n packages"
  local debs
  debs=$(_fetch_set deb bazel | awk '{print $2}') || exit 1
  _log "relocating Bazel into $BAZEL_PREFIX"
  rm -rf "$BAZEL_PREFIX.tmp" && mkdir -p "$BAZEL_PREFIX.tmp"
  printf '%s\n' "$debs" | xargs -P "$(nproc)" -I{} dpkg-deb -x {} "$BAZEL_PREFIX.tmp"
  # The prefix's paths are baked in at relocation, so relocate at the final path.
  rm -rf "$BAZEL_PREFIX" && mv "$BAZEL_PREFIX.tmp" "$BAZEL_PREFIX"
  relocate_bazel "$BAZEL_PREFIX" || _die "relocation check failed; see above"
  touch "$BAZEL_PREFIX/.complete"
}

_provision_go_sdk() {
  local name version sha path
  read -r name version sha path < <(_lock_lines go go-sdk) || _die "artifacts.lock pins no Go SDK"
  local want
  want=$(sed -n 's/^toolchain[[:space:]]\+go\([0-9.]*\).*/\1/p' "$WORKSPACE_DIR/go.mod")
  case $version in
    *-go"$want".linux-amd64) ;;
    *) _die "go.mod says 'toolchain go$want' but artifacts.lock pins $version; run tools/provision/update_lock.sh" ;;
  esac
  GO_SDK=$CACHE/go/$want
  [ -f "$GO_SDK/.complete" ] && return
  _log "fetching the Go SDK go$want"
  local zip
  zip=$(_fetch go "$name" "$version" "$sha" "$path") || exit 1
  rm -rf "$GO_SDK"
  mkdir -p "$CACHE/go"
  _unzip_module "$zip" "$GO_SDK"
  chmod +x "$GO_SDK"/bin/* "$GO_SDK"/pkg/tool/*/*
  touch "$GO_SDK/.complete"
}

# _drop_default_go_sdk MODULE_BAZEL removes rules_go's own default SDK from its module file.
# rules_go declares one from its go.mod (go1.25.0) with no checksum, so resolving its go_sdk
# extension downloads the Go project's list of releases to look the SDK up: a network request in
# every cold build, whose answer would decide an input. Our root module's SDK (go_sdk.host, the
# provisioned go.mod toolchain) is registered first and is the only one any target uses; the
# default one serves rules_go's own tests only.
_drop_default_go_sdk() {
  python3 - "$1" <<'PY' || _die "rules_go's MODULE.bazel no longer declares go_default_sdk as expected"
import sys
path = sys.argv[1]
text = open(path).read()
tag = 'go_sdk.from_file(\n    name = "go_default_sdk",\n    go_mod = "//:go.mod",\n)\n'
repo = '    "go_default_sdk",\n'
if text.count(tag) != 1 or text.count(repo) != 1:
    sys.exit(1)
open(path, "w").write(text.replace(tag, "").replace(repo, ""))
PY
}

# _provision_modules materializes every module the offline graph overrides and writes the rc.
_provision_modules() {
  local key
  key=$( { _lock_lines go modules; _lock_lines maven modules; echo "$BAZEL_PREFIX $GO_SDK";
           find "$_provision_dir" -type f ! -name '*.lock' | LC_ALL=C sort | xargs cat; } | _key)
  GEN=$CACHE/gen/$key
  # shellcheck disable=SC2034 # read by tools/bazel, which sources this file
  OFFLINE_RC=$GEN/offline.bazelrc
  [ -f "$GEN/.complete" ] && return
  _log "assembling the offline module overrides"
  local tmp=$GEN.tmp
  rm -rf "$tmp" && mkdir -p "$tmp"
  cp -R "$_provision_dir/modules" "$tmp/modules"
  local m=$tmp/modules

  local -A file
  local name f fetched
  fetched=$(_fetch_set go modules && _fetch_set maven modules) || exit 1
  while read -r name f; do file[$name]=$f; done <<< "$fetched"

  _unzip_module "${file[github.com/bazelbuild/rules_go]}" "$m/rules_go"
  _drop_default_go_sdk "$m/rules_go/MODULE.bazel"
  _unzip_module "${file[github.com/bazelbuild/bazel-gazelle]}" "$m/gazelle"
  # go_deps reads gazelle's go.work, which uses ./v2; the proxy zip leaves that nested module out.
  _unzip_module "${file[github.com/bazel-contrib/bazel-gazelle/v2]}" "$m/gazelle/v2"
  : > "$m/gazelle/v2/go.sum"

  # protobuf: prebuilt protoc 29.0 and the well-known-type protos (from protobuf-java's jar).
  install -m 0755 "${file[com.google.protobuf:protoc:linux-x86_64]}" "$m/protobuf/bin/protoc-linux-x86_64"
  install -m 0755 "${file[com.google.protobuf:protoc:linux-aarch_64]}" "$m/protobuf/bin/protoc-linux-aarch_64"
  (cd "$m/protobuf/src" && unzip -q "${file[com.google.protobuf:protobuf-java]}" 'google/protobuf/*.proto')

  _write_offline_rc "$tmp" > "$tmp/offline.bazelrc"
  rm -rf "$GEN" && mv "$tmp" "$GEN"
  # The rc names $GEN, so fix up the paths written while it was still $tmp.
  sed -i "s#$tmp#$GEN#g" "$GEN/offline.bazelrc"
  touch "$GEN/.complete"
}

# _write_offline_rc DIR prints the machine-specific rc: where Bazel, the modules and the SDK are.
_write_offline_rc() {
  local gen=$1 share=$BAZEL_PREFIX/usr/share/bazel
  cat <<RC
# GENERATED by tools/bazel from tools/provision; machine-specific, never checked in.
# Read after the workspace .bazelrc (it comes in through --bazelrc), so its overrides win.
startup --install_base=$share
startup --trust_install_base
startup --server_javabase=$BAZEL_PREFIX/usr/lib/jvm/java-25-openjdk-amd64
startup --host_jvm_args=-XX:-UsePerfData

# No registry is ever contacted: every module of the graph is overridden, and anything that is not
# fails at once with "not found" instead of trying the network.
common --registry=file://$gen/modules/empty_registry
common --lockfile_mode=off

# Modules packaged by Debian, inside the relocated prefix.
common --override_module=platforms=$share/tools/platforms
common --override_module=bazel_features=$share/tools/features
common --override_module=bazel_skylib=$share/tools/skylib
common --override_module=rules_cc=$share/rules/cc
common --override_module=rules_java=$share/rules/java
common --override_module=rules_license=$share/rules/license
common --override_module=rules_python=$share/rules/python
common --override_module=rules_proto=$share/rules/proto
common --override_module=rules_shell=$share/rules/shell
common --override_module=rules_pkg=$share/rules/pkg

# Modules from the Go module proxy and Maven Central, and the repository's own stand-ins.
common --override_module=rules_go=$gen/modules/rules_go
common --override_module=gazelle=$gen/modules/gazelle
common --override_module=protobuf=$gen/modules/protobuf
common --override_module=package_metadata=$gen/modules/package_metadata
common --override_module=buildozer=$gen/modules/buildozer
common --override_module=apple_support=$gen/modules/apple_support
common --override_module=zlib=$gen/modules/zlib

# go_sdk.host() in MODULE.bazel takes the SDK from GOROOT; go_deps downloads modules through the
# machine's GOPROXY into a cache that outlives output bases.
common --repo_env=GOROOT=$GO_SDK
common --repo_env=GO_REPOSITORY_USE_HOST_MODCACHE=1
common --repo_env=GOMODCACHE=$CACHE/gomod
# gazelle builds its repository tools (gazelle, fetch_repo) with go build, inside a repository
# rule, once per output base, before any go_deps repository can be made: 45 to 50 s of every fresh
# clone. With a Go build cache that outlives output bases, as the module cache does, only the first
# build on a machine compiles them. Go's build cache is content-addressed, so sharing it changes no
# output.
common --repo_env=GO_REPOSITORY_USE_HOST_CACHE=1
common --repo_env=GOCACHE=$CACHE/gocache
common --repo_env=GOPATH=$CACHE/gopath

# The target platform is named, not left as Bazel's auto-detected host platform: this Bazel runs on
# x86_64 Linux only, and the images' per-platform transitions set //platforms:linux_amd64. With the
# host platform as the default, the same amd64 code was configured twice (once for tests, once for
# images) and compiled twice. --config=linux_arm64 still overrides it.
build --platforms=//platforms:linux_amd64

# One action cache for every workspace of this user: a fresh clone, or the same revision at another
# path, reuses what any of them built (output bases follow the workspace path and share nothing).
# Bazel collects it in the background when it is idle: oldest entries first, down to the size cap.
# tools/repro and tools/rbe/ci pass --disk_cache= to the builds that must really run (the clean
# builds, the farm's); tools/repro --farm lets it answer for this machine's own build.
build --disk_cache=$CACHE/disk-cache
build --experimental_disk_cache_gc_max_size=24G
build --experimental_disk_cache_gc_max_age=30d
RC
  case $CACHE in
    /tmp/*) cat <<RC

# linux-sandbox's hermetic /tmp mounts only the /tmp/<dir> of the output base and the workspace.
# Actions also reach into this cache: external/bazel_tools (install base), the module overrides
# (protoc, rules_go), the Go SDK and module cache. Mount all of it, so that an output base elsewhere
# in /tmp (tools/repro, tools/rbe/ci) works too.
build --sandbox_add_mount_pair=$CACHE
RC
      ;;
  esac
}

_check_host_tools() {
  local tool
  for tool in curl sha256sum unzip dpkg-deb python3 flock xargs; do
    command -v "$tool" >/dev/null 2>&1 || _die "provisioning needs '$tool' on the host (Debian: apt-get install $tool)"
  done
}

# provision WORKSPACE_DIR: sets BAZEL_PREFIX, GO_SDK and OFFLINE_RC, provisioning what is missing.
provision() {
  WORKSPACE_DIR=$1
  CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/grpcbench
  _check_host_tools
  mkdir -p "$CACHE"
  local t0=$SECONDS
  exec 9> "$CACHE/.provision.lock"
  flock 9
  _provision_bazel
  _provision_go_sdk
  _provision_modules
  flock -u 9
  exec 9>&-
  if [ $((SECONDS - t0)) -gt 1 ]; then _log "provisioned in $((SECONDS - t0)) s (cache: $CACHE)"; fi
}

