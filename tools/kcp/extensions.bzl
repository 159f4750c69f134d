"""The `kcp` module extension: the kcp server binary, built from the Go modules pinned in kcp.lock.

    kcp = use_extension("//tools/kcp:extensions.bzl", "kcp")
    use_repo(kcp, "kcp")

makes @kcp//:kcp, an executable for the host (the machine that runs the benchmark). See
tools/kcp/README.md for why kcp is built by a script of ours rather than by rules_go.
"""

load("//tools/kcp/private:kcp_repository.bzl", "kcp_repository")

def _kcp_impl(mctx):
    kcp_repository(name = "kcp")
    return mctx.extension_metadata(reproducible = True)

kcp = module_extension(
    implementation = _kcp_impl,
    doc = "Builds the kcp server pinned in //tools/kcp:kcp.lock.",
)
