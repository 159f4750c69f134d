"""The `sbcl` module extension: SBCL, qemu-user-static and Common Lisp libraries from Debian.

Every package is pinned in //tools/provision:artifacts.lock (sets sbcl-amd64, sbcl-arm64, qemu and
cl) and fetched from the Debian mirror this machine is configured with, so that the Lisp toolchain
is as pinned as the rest of the build:

    sbcl = use_extension("//lisp/bazel:extensions.bzl", "sbcl")
    use_repo(sbcl, "sbcl_linux_amd64", "sbcl_linux_arm64", "qemu_user_static", "cl_libraries")

It also fetches the one other Debian tool that tests run, runc (set runc), for the container image
tests, so that every Debian package the build uses comes through one pinned path.
"""

load("//lisp/bazel/private:debian_archive.bzl", "debian_archive")

_LOCK = Label("//tools/provision:artifacts.lock")
_REGISTRY_URL = Label("//tools/provision:registry_url.sh")

def _lock_sets(text):
    sets = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        kind, set_name, _name, _version, sha256, path = line.split("\t")
        if kind == "deb":
            sets.setdefault(set_name, []).append(path + " " + sha256)
    return sets

def _debian_mirror(mctx):
    mirror = mctx.os.environ.get("DEBIAN_MIRROR", "")
    if mirror:
        return mirror
    res = mctx.execute(["bash", str(mctx.path(_REGISTRY_URL)), "deb"])
    if res.return_code != 0:
        fail("cannot locate the Debian mirror: " + res.stderr)
    return res.stdout.strip()

def _sbcl_impl(mctx):
    sets = _lock_sets(mctx.read(mctx.path(_LOCK)))
    mirror = _debian_mirror(mctx)
    for want in ["sbcl-amd64", "sbcl-arm64", "qemu", "cl", "runc"]:
        if want not in sets:
            fail("artifacts.lock has no '%s' set; run tools/provision/update_lock.sh" % want)
    debian_archive(
        name = "sbcl_linux_amd64",
        debs = sets["sbcl-amd64"],
        mirror = mirror,
        build_file = Label("//lisp/bazel/private:sbcl.BUILD.bazel"),
    )
    debian_archive(
        name = "sbcl_linux_arm64",
        debs = sets["sbcl-arm64"],
        mirror = mirror,
        build_file = Label("//lisp/bazel/private:sbcl.BUILD.bazel"),
    )
    debian_archive(
        name = "qemu_user_static",
        debs = sets["qemu"],
        mirror = mirror,
        build_file = Label("//lisp/bazel/private:qemu.BUILD.bazel"),
    )
    debian_archive(
        name = "cl_libraries",
        debs = sets["cl"],
        mirror = mirror,
        build_file = Label("//lisp/third_party:cl_libraries.BUILD.bazel"),
    )
    debian_archive(
        name = "runc",
        debs = sets["runc"],
        mirror = mirror,
        build_file = Label("//go/routeguide/image:runc.BUILD.bazel"),
    )
    return mctx.extension_metadata(reproducible = True)

sbcl = module_extension(
    implementation = _sbcl_impl,
    doc = "Fetches the pinned SBCL toolchains and Common Lisp libraries.",
    environ = ["DEBIAN_MIRROR"],
)
