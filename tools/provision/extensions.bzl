"""The `debian_tools` module extension: programs that tests run, from Debian, pinned.

    debian_tools = use_extension("//tools/provision:extensions.bzl", "debian_tools")
    use_repo(debian_tools, "openssl_linux_amd64", "openssl_linux_arm64", "runc")

makes @runc (set runc of artifacts.lock: runc and the libseccomp it links), the container runtime of
//go/routeguide/image:image_test, and @openssl_linux_amd64 and @openssl_linux_arm64 (sets
openssl-amd64 and openssl-arm64: libssl3), the OpenSSL that clgrpc's TLS loads. Every package comes from the Debian mirror this machine is
configured with and is checked against its sha256 in artifacts.lock, as the Lisp toolchain's are
(//lisp/bazel:extensions.bzl, over the same helpers).
"""

load("//tools/provision:debian.bzl", "debian_mirror", "debian_sets")
load("//tools/provision:debian_archive.bzl", "debian_archive")

def _debian_tools_impl(mctx):
    sets = debian_sets(mctx, ["runc", "openssl-amd64", "openssl-arm64"])
    mirror = debian_mirror(mctx)
    debian_archive(
        name = "runc",
        debs = sets["runc"],
        mirror = mirror,
        build_file = Label("//tools/provision:runc.BUILD.bazel"),
    )
    for cpu in ["amd64", "arm64"]:
        debian_archive(
            name = "openssl_linux_" + cpu,
            debs = sets["openssl-" + cpu],
            mirror = mirror,
            build_file = Label("//tools/provision:openssl.BUILD.bazel"),
        )
    return mctx.extension_metadata(reproducible = True)

debian_tools = module_extension(
    implementation = _debian_tools_impl,
    doc = "Fetches the pinned Debian programs that tests run (runc) and the OpenSSL libraries clgrpc loads.",
    environ = ["DEBIAN_MIRROR"],
)
