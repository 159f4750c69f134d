#!/usr/bin/env bash
# The Greeter example as a user runs it (README.md): a plain SBCL, ASDF
# finding clgrpc, its libraries and the example from a source registry,
# and (asdf:test-system "greeter").  No Bazel rule compiles anything.
#
#   asdf_test.sh SBCL CLGRPC_ASD LIBRARY_ASD GREETER_ASD
#
# Paths are absolute, or relative to the runfiles root (Bazel's rlocation
# paths) when run as a test.
# SBCL is the sbcl binary of an unpacked Debian SBCL (its root has the
# core, the contribs and libzstd); LIBRARY_ASD is one .asd under the
# directory that holds the Common Lisp libraries' sources.
set -euo pipefail

root_dir=${RUNFILES_DIR:-${TEST_SRCDIR:-$PWD}}
abs() { case "$1" in /*) echo "$1" ;; *) echo "$root_dir/$1" ;; esac; }
sbcl=$(abs "$1")
clgrpc_dir=$(dirname "$(abs "$2")")
libraries_dir=$(dirname "$(dirname "$(abs "$3")")")
greeter_dir=$(dirname "$(abs "$4")")
root=$(dirname "$(dirname "$(dirname "$sbcl")")")

export SBCL_HOME=$root/usr/lib/sbcl
export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu
# ASDF's compiled files go to the cache: the test's own directory.
export XDG_CACHE_HOME=${TEST_TMPDIR:-$(mktemp -d)}
export CL_SOURCE_REGISTRY="(:source-registry (:tree \"$libraries_dir/\") (:directory \"$clgrpc_dir/\") (:directory \"$greeter_dir/\") :ignore-inherited-configuration)"

exec "$sbcl" --core "$SBCL_HOME/sbcl.core" --non-interactive --no-sysinit --no-userinit \
  --eval '(require :asdf)' \
  --eval '(asdf:test-system "greeter")'
