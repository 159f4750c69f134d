"""The `sbcl` module extension: SBCL, qemu-user-static and Common Lisp libraries from Debian.

Every package is pinned in //tools/provision:artifacts.lock (sets sbcl-amd64, sbcl-arm64, qemu and
cl) and fetched from the Debian mirror this machine is configured with, so that the Lisp toolchain
is as pinned as the rest of the build:

    sbcl = use_extension("//lisp/bazel:extensions.bzl", "sbcl")
    use_repo(sbcl, "sbcl_linux_amd64", "sbcl_linux_arm64", "qemu_user_static", "cl_libraries")
"""

load("//tools/provision:debian.bzl", "debian_mirror", "debian_sets")
load("//tools/provision:debian_archive.bzl", "debian_archive")

def _sbcl_impl(mctx):
    sets = debian_sets(mctx, ["sbcl-amd64", "sbcl-arm64", "qemu", "cl"])
    mirror = debian_mirror(mctx)
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
    return mctx.extension_metadata(reproducible = True)

sbcl = module_extension(
    implementation = _sbcl_impl,
    doc = "Fetches the pinned SBCL toolchains and Common Lisp libraries.",
    environ = ["DEBIAN_MIRROR"],
)
