# shellcheck shell=bash
# Turns a directory of extracted Debian sid packages (bazel-bootstrap, its JDK and libraries) into a
# Bazel that runs rootless on an older glibc host. Sourced by provision.sh.
#
# Sid's binaries need glibc >= 2.38 and libstdc++ 14; the host may be older. Rather than a chroot,
# every ELF executable is pointed at the prefix's own dynamic loader and libraries, and every
# absolute /usr path that Debian baked into files is rewritten into the prefix. The result is not
# movable: paths inside it name the prefix literally.

# relocate_bazel PREFIX
relocate_bazel() {
  local p=$1
  local lib=$p/usr/lib/x86_64-linux-gnu
  local ldso=$lib/ld-linux-x86-64.so.2
  local patchelf=("$ldso" --library-path "$lib" "$p/usr/bin/patchelf")
  local share=$p/usr/share/bazel

  { [ -x "$p/usr/bin/bazel" ] && [ -e "$ldso" ] && [ -x "$p/usr/bin/patchelf" ]; } \
    || { echo "relocate: $p is missing bazel, ld.so or patchelf" >&2; return 1; }

  # 1. Absolute symlinks (e.g. the JDK's conf/ -> /etc/java-25-openjdk/) into the prefix.
  local link target
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    case $target in "$p"/*) continue ;; esac
    if [ -e "$p$target" ] || [ -L "$p$target" ]; then ln -sfn "$p$target" "$link"; fi
  done < <(find "$p" -type l -lname '/*' -print0)

  # 2. ELF executables: the prefix's loader, and a DT_RPATH (not RUNPATH, so that it also covers
  #    libraries the JVM dlopens, such as libjvm.so and libunix_jni.so) ending in the prefix libdir.
  local f rpath
  while IFS= read -r -d '' f; do
    # patchelf is run through the loader above and never exec'd, so it needs no patching.
    case ${f##*/} in ld-linux* | *.so | *.so.* | patchelf) continue ;; esac
    [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    "${patchelf[@]}" --print-interpreter "$f" >/dev/null 2>&1 || continue
    rpath=$("${patchelf[@]}" --print-rpath "$f")
    case ":$rpath:" in *":$lib:"*) ;; *) rpath=${rpath:+$rpath:}$lib ;; esac
    "${patchelf[@]}" --set-interpreter "$ldso" --force-rpath --set-rpath "$rpath" "$f"
  done < <(find "$p/usr" -type f -perm -u+x -print0)

  # 3. The server classpath: prefix paths, plus a build-data.properties so that `bazel version`
  #    prints the build label (Debian's A-server.jar lacks one).
  local cp=$share/bazel_classpath_debian_depends.txt
  sed -i "s#\(^\|[:[:space:]]\)/usr/share/java/#\1$p/usr/share/java/#g" "$cp"
  mkdir -p "$share/build-data"
  printf 'build.label=%s\n' "$(tr -d '[:space:]' < "$share/build-label.txt")" > "$share/build-data/build-data.properties"
  echo "$share/build-data" >> "$cp"
  # shellcheck disable=SC2154 # set by provision.sh, which sources this file
  python3 "$_provision_dir/rewrite_jar_manifests.py" "$p" "$cp" >/dev/null

  # 4. Prove that the client and the JVM load nothing from the host.
  local out bad=0
  for f in "$p/usr/bin/bazel" "$p"/usr/lib/jvm/java-25-openjdk-amd64/bin/java; do
    out=$(env -u LD_PRELOAD -u LD_LIBRARY_PATH "$ldso" --list "$f" 2>&1) || { echo "$out" >&2; bad=1; continue; }
    if printf '%s\n' "$out" | grep -v linux-vdso | grep -v "=> $p/\|^[[:space:]]*$p/" | grep -q .; then
      echo "relocate: $f loads host libraries:" >&2
      printf '%s\n' "$out" >&2
      bad=1
    fi
  done
  return $bad
}
