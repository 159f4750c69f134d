"""kcp_repository: kcp's source and the modules it imports (//tools/kcp:fetch), and a BUILD file
that compiles them with go_module_binary, a Bazel action.

Only the download happens here, outside Bazel's scheduler; the compiling is an action, so it is
cached in the disk and remote caches like every other, and runs beside the rest of the build.
"""

_FETCH = Label("//tools/kcp:fetch")
_LOCK = Label("//tools/kcp:kcp.lock")

# What the fetch script reads besides its own files: the Go SDK pin (go.mod's toolchain line,
# checked against artifacts.lock) and the code that provisions the SDK and finds the proxy.
_INPUTS = [
    Label("//:go.mod"),
    Label("//tools/provision:artifacts.lock"),
    Label("//tools/provision:provision.sh"),
    Label("//tools/provision:registries.sh"),
]

_RULE = Label("//tools/kcp/private:go_module_binary.bzl")

_BUILD_FILE = """\
load("{rule}", "go_module_binary")

# kcp {version} (emulating Kubernetes {kube}), compiled by a Bazel action from the fetched module
# and the modules it imports. :kcp is the executable for tools (benchmark(tools = ...)), bin/kcp
# the same file for $(rlocationpath) in tests. It runs where the tests run (this machine's CPU);
# cross builds skip what needs it.
go_module_binary(
    name = "kcp",
    src = "src.tar",
    proxy = "proxy.tar",
    package = "./cmd/kcp",
    out = "bin/kcp",
    # The version stamps of kcp's Makefile, minus the build date and git state.
    x_defs = {{
{x_defs}
    }},
    target_compatible_with = ["@platforms//os:linux", "@platforms//cpu:{cpu}"],
    visibility = ["//visibility:public"],
)
"""

_CPUS = {"amd64": "x86_64", "x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}

# The packages whose version variables kcp's Makefile stamps.
_VERSION_PACKAGES = ["k8s.io/client-go/pkg/version", "k8s.io/component-base/version"]

def _kcp_repository_impl(rctx):
    # Reading the inputs makes them inputs of this repository: a change to the pin, the script
    # or the SDK pin fetches again (the script's cache key covers the same files).
    lock = rctx.read(rctx.path(_LOCK))
    rctx.read(rctx.path(_FETCH))
    for f in _INPUTS:
        rctx.read(rctx.path(f))
    version = ""
    for line in lock.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[0] == "github.com/kcp-dev/kcp":
            version = fields[1]
    if not version:
        fail("//tools/kcp:kcp.lock pins no github.com/kcp-dev/kcp")

    rctx.report_progress("fetching kcp %s and the modules it imports (once per pin)" % version)
    res = rctx.execute(["bash", str(rctx.path(_FETCH))], timeout = 3600, quiet = False)
    if res.return_code != 0:
        fail("tools/kcp/fetch failed (exit %d):\n%s" % (res.return_code, res.stderr))
    fetched = rctx.path(res.stdout.strip().splitlines()[-1])

    # Links into the per-user cache: Bazel hashes the files themselves, so actions, sandboxes and
    # remote executors see their content. Watched, so that a pruned or changed tar fetches again
    # (the fetch script checks that both are there).
    for name in ["src.tar", "proxy.tar"]:
        rctx.watch(fetched.get_child(name))
        rctx.symlink(fetched.get_child(name), name)
    kube = rctx.read(fetched.get_child("kube_version")).strip()
    major, minor = kube.lstrip("v").split(".")[:2]
    stamps = []
    for pkg in _VERSION_PACKAGES:
        stamps.append((pkg + ".gitVersion", "%s+kcp-%s" % (kube, version)))
        stamps.append((pkg + ".gitMajor", major))
        stamps.append((pkg + ".gitMinor", minor))
    arch = rctx.os.arch
    rctx.file("BUILD.bazel", _BUILD_FILE.format(
        rule = str(_RULE),
        version = version,
        kube = kube,
        cpu = _CPUS.get(arch, arch),
        x_defs = "\n".join(['        "%s": "%s",' % s for s in stamps]),
    ))

kcp_repository = repository_rule(
    implementation = _kcp_repository_impl,
    doc = "kcp's source and modules, pinned in //tools/kcp:kcp.lock, and a go_module_binary over them.",
    # The fetch script's environment: where the cache is and which Go proxy to use.
    environ = ["GOPROXY", "XDG_CACHE_HOME", "HOME"],
)
