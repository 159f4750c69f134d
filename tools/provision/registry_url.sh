#!/usr/bin/env bash
# Prints the base URL of a package registry as this machine is configured: deb, go or maven.
# For Bazel repository rules and module extensions, which need the same answer as tools/bazel.
set -euo pipefail
# shellcheck source=registries.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/registries.sh"
case ${1:-} in
  deb) debian_mirror || { echo "no Debian mirror in the host's apt sources; set DEBIAN_MIRROR" >&2; exit 1; } ;;
  go) go_proxy ;;
  maven) maven_repository ;;
  *) echo "usage: registry_url.sh deb|go|maven" >&2; exit 2 ;;
esac
