"""kcp_repository: runs //tools/kcp:build and copies the binary it prints into a repository."""

_BUILD = Label("//tools/kcp:build")
_LOCK = Label("//tools/kcp:kcp.lock")

# What the build script reads besides its own files: the Go SDK pin (go.mod's toolchain line,
# checked against artifacts.lock) and the code that provisions the SDK and finds the proxy.
_INPUTS = [
    Label("//:go.mod"),
    Label("//tools/provision:artifacts.lock"),
    Label("//tools/provision:provision.sh"),
    Label("//tools/provision:registries.sh"),
]

_BUILD_FILE = """\
load("@rules_shell//shell:sh_binary.bzl", "sh_binary")

# kcp {version}, built by //tools/kcp:build for the host ({arch}).
# :kcp for tools (benchmark(tools = ...)), bin/kcp as a single file for $(rlocationpath) in tests.
exports_files(["bin/kcp"])

sh_binary(
    name = "kcp",
    srcs = ["bin/kcp"],
    target_compatible_with = ["@platforms//os:linux", "@platforms//cpu:{cpu}"],
    visibility = ["//visibility:public"],
)
"""

_CPUS = {"amd64": "x86_64", "x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}

def _kcp_repository_impl(rctx):
    # Reading the inputs makes them inputs of this repository: a change to the pin, the script
    # or the SDK pin builds again (the script's cache key covers the same files).
    lock = rctx.read(rctx.path(_LOCK))
    rctx.read(rctx.path(_BUILD))
    for f in _INPUTS:
        rctx.read(rctx.path(f))
    version = ""
    for line in lock.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[0] == "github.com/kcp-dev/kcp":
            version = fields[1]
    if not version:
        fail("//tools/kcp:kcp.lock pins no github.com/kcp-dev/kcp")

    rctx.report_progress("building kcp %s (about 4 minutes on 2 cores, once per pin)" % version)
    res = rctx.execute(["bash", str(rctx.path(_BUILD))], timeout = 3600, quiet = False)
    if res.return_code != 0:
        fail("tools/kcp/build failed (exit %d):\n%s" % (res.return_code, res.stderr))
    built = res.stdout.strip().splitlines()[-1]

    # A copy, not a symlink into the cache: the repository then holds everything its targets
    # need, so sandboxes and remote caches see the binary itself.
    rctx.execute(["mkdir", "-p", "bin"])
    res = rctx.execute(["cp", built, "bin/kcp"])
    if res.return_code != 0:
        fail("copying %s: %s" % (built, res.stderr))
    arch = rctx.os.arch
    rctx.file("BUILD.bazel", _BUILD_FILE.format(version = version, arch = arch, cpu = _CPUS.get(arch, arch)))

kcp_repository = repository_rule(
    implementation = _kcp_repository_impl,
    doc = "The kcp binary pinned in //tools/kcp:kcp.lock, built by //tools/kcp:build.",
    # The build script's environment: where the cache is and which Go proxy to use.
    environ = ["GOPROXY", "XDG_CACHE_HOME", "HOME"],
)
