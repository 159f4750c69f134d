"""The `debian_tools` module extension: programs that tests run, from Debian, pinned.

    debian_tools = use_extension("//tools/provision:extensions.bzl", "debian_tools")
    use_repo(debian_tools, "runc")

makes @runc (set runc of artifacts.lock: runc and the libseccomp it links), the container runtime of
//go/routeguide/image:image_test. Every package comes from the Debian mirror this machine is
configured with and is checked against its sha256 in artifacts.lock, as the Lisp toolchain's are
(//lisp/bazel:extensions.bzl, over the same helpers).
"""

load("//tools/provision:debian.bzl", "debian_mirror", "debian_sets")
load("//tools/provision:debian_archive.bzl", "debian_archive")

def _debian_tools_impl(mctx):
    sets = debian_sets(mctx, ["runc"])
    debian_archive(
        name = "runc",
        debs = sets["runc"],
        mirror = debian_mirror(mctx),
        build_file = Label("//tools/provision:runc.BUILD.bazel"),
    )
    return mctx.extension_metadata(reproducible = True)

debian_tools = module_extension(
    implementation = _debian_tools_impl,
    doc = "Fetches the pinned Debian programs that tests run (runc).",
    environ = ["DEBIAN_MIRROR"],
)
