#!/bin/sh
# Runs SBCL for the driver's save command in a fresh directory whose path always has the same
# length, so that the saved executable does not depend on where the build ran.
#
#   save.sh OUT SBCL CORE DRIVER EMULATOR SYSROOT -- ARG... -- FASL...
#
# In the directory it runs
#
#   [EMULATOR -L SYSROOT] ./sbcl --core sbcl.core ARG... 0.fasl 1.fasl ...
#
# with the runtime, the contribs, DRIVER (as driver.lisp) and each FASL copied there, then the
# driver's scrub command on the file that ARG saved as "saved" (with the SBCL options of ARG, those
# up to --end-toplevel-options), and moves that file to OUT. EMULATOR and SYSROOT are empty for a
# native SBCL.
#
# Why: SBCL's heap at save time records its history. The startup stores the working directory,
# the runtime's path (/proc/self/exe, which resolves Bazel's symlinks) and the core's path, and
# every load stores the fasl's truename. Strings of other lengths move every later allocation, and
# the saved image keeps the traces: each type object's hash is drawn from the allocation pointer,
# and the padding that the last garbage collection leaves between objects keeps stale words. Copies
# under /tmp/lisp-save.XXXXXXXX make all those paths equally long in every build (their contents
# do not reach the image), whatever the sandbox, output base, machine or remote worker. What the
# saving process's garbage still leaves in the padding, the scrub command clears (see driver.lisp).
set -eu

{ [ $# -ge 7 ] && [ "$7" = "--" ]; } || {
  echo "usage: save.sh OUT SBCL CORE DRIVER EMULATOR SYSROOT -- ARG... -- FASL..." >&2
  exit 2
}
out=$1 sbcl=$2 core=$3 driver=$4 emulator=$5 sysroot=$6
shift 7

here=$(pwd)
absolute() {
  case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "$here/$1" ;;
  esac
}

# A fixed directory and an 8-character suffix: the same length every time, unique on a shared /tmp.
work=$(mktemp -d /tmp/lisp-save.XXXXXXXX)
trap 'rm -rf "$work"' EXIT

cp "$sbcl" "$work/sbcl"
# The core is opened by name, never by truename: a link is enough, and saves copying 40 MB.
ln -s "$(absolute "$core")" "$work/sbcl.core"
# REQUIRE loads contribs by truename, so they are copied as files: a sandbox gives the action links
# into the output base, which -L follows.
cp -R -L "$(dirname "$core")/contrib" "$work/contrib"
cp "$driver" "$work/driver.lisp"
# The driver is loaded as source, and its functions, which a saved executable keeps, record the
# file's write date. (The driver gives the sources it compiles a fixed date itself.)
TZ=UTC0 touch -t 198001010000.00 "$work/driver.lisp"

# The driver's arguments up to the second "--", then the fasls, renamed by position.
set -- "$@" "--end-of-args--"
while [ "$1" != "--" ]; do
  [ "$1" != "--end-of-args--" ] || { echo "save.sh: no -- before the fasls" >&2; exit 2; }
  set -- "$@" "$1"
  shift
done
shift
n=0
while [ "$1" != "--end-of-args--" ]; do
  cp "$1" "$work/$n.fasl"
  shift
  set -- "$@" "$n.fasl"
  n=$((n + 1))
done
shift

if [ -n "${LD_LIBRARY_PATH:-}" ]; then
  LD_LIBRARY_PATH=$(absolute "$LD_LIBRARY_PATH")
  export LD_LIBRARY_PATH
fi
if [ -n "$emulator" ]; then
  emulator=$(absolute "$emulator") sysroot=$(absolute "$sysroot")
fi
run_sbcl() {
  if [ -n "$emulator" ]; then
    "$emulator" -L "$sysroot" ./sbcl --core sbcl.core "$@"
  else
    ./sbcl --core sbcl.core "$@"
  fi
}
cd "$work"
export SBCL_HOME=.
run_sbcl "$@"

# The scrub command takes the same SBCL options: the arguments up to --end-toplevel-options.
options=0
for a do
  options=$((options + 1))
  [ "$a" != "--end-toplevel-options" ] || break
done
all=$#
i=0
for a do
  i=$((i + 1))
  [ $i -gt $options ] || set -- "$@" "$a"
done
shift "$all"
run_sbcl "$@" scrub saved
cd "$here"
mv "$work/saved" "$out"
