"""Makes Debian's Bazel server classpath resolve inside a relocated prefix.

Debian's jars name their dependencies with absolute `Class-Path: /usr/share/java/x.jar` manifest
entries. Relocated, those point at the host (where nothing is installed) and the server starts but
never answers (NoClassDefFoundError io/perfmark/PerfMark inside grpc-core). Every jar reachable from
the server classpath file gets those entries rewritten to bare names, which the JVM resolves next to
the jar itself, i.e. inside the prefix. Signed jars are left alone (rewriting would break them).

Usage: rewrite_jar_manifests.py PREFIX CLASSPATH_FILE
"""

import os
import re
import shutil
import sys
import tempfile
import zipfile

MANIFEST = "META-INF/MANIFEST.MF"
SIGNATURE = re.compile(r"META-INF/[^/]+\.(SF|RSA|DSA|EC)$")
HOST_JAVA = "/usr/share/java/"


def unfold(text):
    """Joins manifest continuation lines (a leading space continues the previous line)."""
    lines = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.startswith(" ") and lines:
            lines[-1] += line[1:]
        else:
            lines.append(line)
    return lines


def wrap72(line):
    """Folds a manifest line into 72-byte lines, as the JAR spec requires."""
    data = line.encode("utf-8")
    parts = [data[:72]]
    data = data[72:]
    while data:
        parts.append(b" " + data[:71])
        data = data[71:]
    return b"\r\n".join(parts)


def read_manifest(zf):
    try:
        return zf.read(MANIFEST).decode("utf-8")
    except KeyError:
        return ""


def class_path(text):
    for line in unfold(text):
        if line.startswith("Class-Path:"):
            return line[len("Class-Path:"):].split()
    return []


def rewrite(path):
    """Rewrites absolute host Class-Path entries in place; returns whether the jar changed."""
    with zipfile.ZipFile(path) as zf:
        if any(SIGNATURE.match(n) for n in zf.namelist()):
            return False
        lines = unfold(read_manifest(zf))
        changed = False
        for i, line in enumerate(lines):
            if line.startswith("Class-Path:"):
                entries = line[len("Class-Path:"):].split()
                relative = [e[len(HOST_JAVA):] if e.startswith(HOST_JAVA) else e for e in entries]
                if relative != entries:
                    lines[i] = "Class-Path: " + " ".join(relative)
                    changed = True
        if not changed:
            return False
        while lines and lines[-1] == "":
            lines.pop()
        manifest = b"\r\n".join(wrap72(l) for l in lines) + b"\r\n\r\n"
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
        os.close(fd)
        with zipfile.ZipFile(tmp, "w") as out:
            for info in zf.infolist():
                data = manifest if info.filename == MANIFEST else zf.read(info)
                out.writestr(info, data, compress_type=info.compress_type)
    shutil.copymode(path, tmp)
    os.replace(tmp, path)
    return True


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: rewrite_jar_manifests.py PREFIX CLASSPATH_FILE\n")
        return 2
    prefix, cpfile = argv[1], argv[2]
    java_dir = os.path.join(prefix, "usr/share/java")
    with open(cpfile) as f:
        todo = [line.strip() for line in f if line.strip()]
    seen, rewritten = set(), 0
    while todo:
        jar = todo.pop()
        if jar in seen or not os.path.isfile(jar):
            seen.add(jar)
            continue
        seen.add(jar)
        real = os.path.realpath(jar)
        with zipfile.ZipFile(real) as zf:
            for entry in class_path(read_manifest(zf)):
                if entry.startswith("/"):
                    todo.append(os.path.join(java_dir, os.path.basename(entry)))
                else:
                    todo.append(os.path.join(os.path.dirname(jar), entry))
        if rewrite(real):
            rewritten += 1
    print("jar manifests rewritten: %d of %d scanned" % (rewritten, len(seen)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
