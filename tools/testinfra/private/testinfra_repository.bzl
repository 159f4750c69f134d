"""testinfra_repository: runs //tools/testinfra:fetch and copies the LoadTest CRD it prints."""

_FETCH = Label("//tools/testinfra:fetch")
_LOCK = Label("//tools/testinfra:testinfra.lock")

# What the fetch script reads besides its own file: the Go SDK pin and the code that provisions the
# SDK, finds the proxy and checks a module's hash.
_INPUTS = [
    Label("//:go.mod"),
    Label("//tools/provision:artifacts.lock"),
    Label("//tools/provision:provision.sh"),
    Label("//tools/provision:registries.sh"),
]

_BUILD_FILE = """\
# grpc/test-infra's LoadTest CRD (config/crd/bases/e2etest.grpc.io_loadtests.yaml), {version}.
exports_files(["loadtest_crd.yaml"])
"""

def _testinfra_repository_impl(rctx):
    # Reading the inputs makes them inputs of this repository: a change to the pin or the script
    # fetches again.
    lock = rctx.read(rctx.path(_LOCK))
    rctx.read(rctx.path(_FETCH))
    for f in _INPUTS:
        rctx.read(rctx.path(f))
    version = ""
    for line in lock.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[0] == "github.com/grpc/test-infra":
            version = fields[1]
    if not version:
        fail("//tools/testinfra:testinfra.lock pins no github.com/grpc/test-infra")
    res = rctx.execute(["bash", str(rctx.path(_FETCH))], timeout = 600, quiet = False)
    if res.return_code != 0:
        fail("tools/testinfra/fetch failed (exit %d):\n%s" % (res.return_code, res.stderr))
    crd = res.stdout.strip().splitlines()[-1]

    # A copy, not a symlink into the module cache: sandboxes and remote caches see the file itself.
    res = rctx.execute(["cp", crd, "loadtest_crd.yaml"])
    if res.return_code != 0:
        fail("copying %s: %s" % (crd, res.stderr))
    rctx.execute(["chmod", "0644", "loadtest_crd.yaml"])
    rctx.file("BUILD.bazel", _BUILD_FILE.format(version = version))

testinfra_repository = repository_rule(
    implementation = _testinfra_repository_impl,
    doc = "grpc/test-infra's LoadTest CRD, at the version pinned in //tools/testinfra:testinfra.lock.",
    # The fetch script's environment: where the cache is and which Go proxy to use.
    environ = ["GOPROXY", "XDG_CACHE_HOME", "HOME"],
)
