"""Prints the URL Maven uses for the central repository on this machine.

Maven's own rules: a <mirror> whose <mirrorOf> covers "central" in the user settings
(~/.m2/settings.xml) or else the installation settings (MAVEN_HOME/conf/settings.xml) wins;
otherwise the URL of the repository with id "central" in Maven's super POM, which ships inside
maven-model-builder.jar. Reading it from there keeps every host name out of this repository.

Usage: maven_repository.py MAVEN_HOME
"""

import glob
import os
import sys
import xml.etree.ElementTree as ET
import zipfile


def _local(tag):
    return tag.rsplit("}", 1)[-1]


def _children(elem, name):
    return [c for c in elem if _local(c.tag) == name]


def _text(elem, name):
    for c in _children(elem, name):
        return (c.text or "").strip()
    return ""


def _covers_central(mirror_of):
    parts = [p.strip() for p in mirror_of.split(",")]
    if "!central" in parts:
        return False
    return "central" in parts or "*" in parts or "external:*" in parts


def mirror_from_settings(path):
    if not os.path.isfile(path):
        return None
    root = ET.parse(path).getroot()
    for mirrors in _children(root, "mirrors"):
        for mirror in _children(mirrors, "mirror"):
            if _covers_central(_text(mirror, "mirrorOf")) and _text(mirror, "url"):
                return _text(mirror, "url")
    return None


def central_from_super_pom(maven_home):
    for jar in sorted(glob.glob(os.path.join(maven_home, "lib", "maven-model-builder-*.jar"))):
        with zipfile.ZipFile(jar) as zf:
            root = ET.fromstring(zf.read("org/apache/maven/model/pom-4.0.0.xml"))
        for repos in _children(root, "repositories"):
            for repo in _children(repos, "repository"):
                if _text(repo, "id") == "central":
                    return _text(repo, "url")
    return None


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: maven_repository.py MAVEN_HOME\n")
        return 2
    maven_home = argv[1]
    candidates = [
        os.path.join(os.path.expanduser("~"), ".m2", "settings.xml"),
        os.path.join(maven_home, "conf", "settings.xml"),
    ]
    for settings in candidates:
        url = mirror_from_settings(settings)
        if url:
            print(url.rstrip("/"))
            return 0
    url = central_from_super_pom(maven_home)
    if not url:
        sys.stderr.write("no central repository found in Maven's settings or super POM under %s\n" % maven_home)
        return 1
    print(url.rstrip("/"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
