"""The buildozer_binary extension: @buildozer_binary//:buildozer.exe, built from source on demand."""

# The buildtools revision that gazelle 0.53.0 depends on.
_BUILDTOOLS = "github.com/bazelbuild/buildtools/buildozer@v0.0.0-20250930140053-2eb4fccefb52"

def _buildozer_repo_impl(rctx):
    goroot = rctx.os.environ.get("GOROOT", "")
    if not goroot:
        fail("buildozer: GOROOT is not set; run Bazel through tools/bazel, which provisions the Go SDK")
    env = {
        "CGO_ENABLED": "0",
        "GOBIN": str(rctx.path("bin")),
        "GOCACHE": str(rctx.path(".gocache")),
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",
    }
    if rctx.os.environ.get("GOMODCACHE"):
        env["GOMODCACHE"] = rctx.os.environ["GOMODCACHE"]
    res = rctx.execute([goroot + "/bin/go", "install", _BUILDTOOLS], environment = env, timeout = 900)
    if res.return_code != 0:
        fail("buildozer: go install %s failed:\n%s" % (_BUILDTOOLS, res.stderr))
    rctx.delete(".gocache")
    rctx.symlink("bin/buildozer", "buildozer.exe")
    rctx.file("BUILD.bazel", 'exports_files(["buildozer.exe"])\n')

_buildozer_repo = repository_rule(
    implementation = _buildozer_repo_impl,
    environ = ["GOROOT", "GOMODCACHE"],
)

def _buildozer_binary_impl(_module_ctx):
    _buildozer_repo(name = "buildozer_binary")

buildozer_binary = module_extension(
    implementation = _buildozer_binary_impl,
    tag_classes = {"buildozer": tag_class(attrs = {"sha256": attr.string_dict(), "version": attr.string()})},
)
