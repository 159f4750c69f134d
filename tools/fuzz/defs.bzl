"""go_fuzz_test: coverage-guided runs of a Go package's fuzz targets, hermetic under Bazel.

`go test -fuzz` is the go tool compiling the package with coverage counters (`-d=libfuzzer`)
and running the test binary with `-test.fuzz`; the fuzzing engine is in the binary. Here rules_go
compiles the package under test with those counters (a go_test's gc_goopts apply to the library it
embeds; its dependencies stay uninstrumented), and fuzz.sh runs the binary, so neither the go tool
nor a module cache is needed. The package's ordinary go_test, which gazelle keeps, still runs every
target's seeds as test cases.
"""

load("@io_bazel_rules_go//go:def.bzl", "go_test")
load("@rules_shell//shell:sh_binary.bzl", "sh_binary")
load("@rules_shell//shell:sh_test.bzl", "sh_test")

def go_fuzz_test(name, srcs, embed, targets, deps = [], fuzztime = "30s", tags = [], **kwargs):
    """Fuzzes each of targets for fuzztime in every `bazel test //...`, and for as long as asked.

    Makes NAME_bin, the instrumented test binary (manual); NAME_<target> for each target, a test
    that fuzzes it for fuzztime from its seeds (testdata/fuzz/<target>); and NAME (manual), which
    under `bazel run` fuzzes every target, or those named, for 10 minutes each or -fuzztime:
    `tools/bazel run //pkg:NAME -- -fuzztime=1h FuzzX`.

    Args:
      name: the prefix of the targets' names.
      srcs: the _test.go files that hold the fuzz targets, with what they use.
      embed: the go_library under test, compiled with coverage counters.
      targets: the fuzz targets' names (FuzzXxx).
      deps: srcs' other dependencies.
      fuzztime: how long each test fuzzes (a Go duration, or Nx executions).
      tags: the tests' tags; a resources:cpu claim of one core is added.
      **kwargs: common attributes (visibility) for every target.
    """
    go_test(
        name = name + "_bin",
        srcs = srcs,
        embed = embed,
        deps = deps,
        gc_goopts = ["-d=libfuzzer"],
        tags = ["manual"],
        **kwargs
    )
    binary = "$(rlocationpath :%s_bin)" % name
    package = native.package_name()
    seeds = native.glob(["testdata/fuzz/**"], allow_empty = True)
    for target in targets:
        sh_test(
            name = name + "_" + target,
            srcs = ["//tools/fuzz:fuzz.sh"],
            args = [package, binary, fuzztime, target, "--"],
            data = [":%s_bin" % name] + seeds,
            # Twice the default fuzztime: a longer one (--test_arg) needs --test_timeout too.
            timeout = "short",
            # One worker on one core (fuzz.sh sets GOMAXPROCS=1), busy the whole run: fuzzing is
            # CPU-bound by design (testcpu gave 0.46 to 0.56 cores while another fuzzing run held
            # the other core of two).
            tags = tags + ["resources:cpu:1"],
            **kwargs
        )
    sh_binary(
        name = name,
        srcs = ["//tools/fuzz:fuzz.sh"],
        args = [package, binary, "10m"] + targets + ["--"],
        data = [":%s_bin" % name] + seeds,
        tags = ["manual"],
        testonly = True,
        **kwargs
    )
