"""The `kcp` module extension: the kcp server binary, built from the Go modules pinned in kcp.lock.

    kcp = use_extension("//tools/kcp:extensions.bzl", "kcp")
    use_repo(kcp, "kcp")

makes @kcp//:kcp, an executable for the host (the machine that runs the benchmark), compiled by a
Bazel action from the modules tools/kcp/fetch downloads. See tools/kcp/README.md for why kcp has a
module graph of its own rather than a place in go_deps.
"""

load("//tools/kcp/private:kcp_repository.bzl", "kcp_repository")

def _kcp_impl(mctx):
    kcp_repository(name = "kcp")
    return mctx.extension_metadata(reproducible = True)

kcp = module_extension(
    implementation = _kcp_impl,
    doc = "Fetches the kcp server pinned in //tools/kcp:kcp.lock, for a Bazel action to compile.",
)
