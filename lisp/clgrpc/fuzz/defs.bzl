"""clgrpc_fuzz_tests: coverage-guided runs of clgrpc's decoder fuzz targets, as go_fuzz_test does for Go.

The engine (the "clgrpc/fuzz" system) compiles each target's source files again at run time with
sb-cover's marks, which is why the sources, and chipz's inflater, are data of the tests: the build
itself stays uninstrumented. fuzz.sh runs the saved executable.
"""

load("@rules_shell//shell:sh_binary.bzl", "sh_binary")
load("@rules_shell//shell:sh_test.bzl", "sh_test")
load("//lisp/bazel:defs.bzl", "lisp_binary")

# chipz's inflater, which the gzip target instruments; any file of its directory names it.
_CHIPZ = "@cl_libraries//:root/usr/share/common-lisp/source/chipz/inflate.lisp"

# The tls target's server credentials and the libssl it loads, as for //lisp/clgrpc:tls_test.
_CREDENTIALS = "//tools/testcerts:ca.pem"
_LIBSSL = "@openssl_linux_amd64//:libssl"

def clgrpc_fuzz_tests(name, binary_deps, sources, targets, seconds = 30, tags = []):
    """Fuzzes each of targets for `seconds` in every `bazel test //...`, and for as long as asked.

    Makes NAME_bin, the fuzzing executable (manual); NAME_<target> for each target, a test that
    replays the target's recorded findings (fuzz/crashes/<target>) and fuzzes it for `seconds`
    from its seeds (fuzz/corpus/<target>); and NAME (manual), which under `bazel run` fuzzes every
    target, or those named, for 10 minutes each or --seconds:
    `tools/bazel run //lisp/clgrpc:NAME -- --seconds 3600 hpack`. NAME must not be a directory of
    the package (its runfiles would hide that directory's files).

    Args:
      name: the prefix of the targets' names.
      binary_deps: the lisp_library of the engine and targets.
      sources: the files the targets compile with coverage marks, as data.
      targets: the fuzz targets' names.
      seconds: how long each test fuzzes.
      tags: the tests' tags; a resources:cpu claim of one core is added.
    """
    lisp_binary(
        name = name + "_bin",
        deps = binary_deps,
        main = "clgrpc.fuzz:main",
        tags = ["manual"],
        testonly = True,
    )
    corpus = native.glob(["fuzz/corpus/**", "fuzz/crashes/**"], allow_empty = True)
    data = [
        ":%s_bin" % name,
        _CHIPZ,
        _CREDENTIALS,
        "//tools/testcerts:credentials",
        _LIBSSL,
    ] + sources + corpus
    common = [
        native.package_name(),
        "$(rlocationpath :%s_bin)" % name,
        "$(rlocationpath %s)" % _CHIPZ,
        "$(rlocationpath %s)" % _CREDENTIALS,
        "$(rlocationpath %s)" % _LIBSSL,
    ]
    for target in targets:
        sh_test(
            name = name + "_" + target,
            srcs = ["fuzz/fuzz.sh"],
            args = common + [str(seconds), target, "--"],
            data = data,
            # Twice `seconds` and the start-up: a longer run (--test_arg) needs --test_timeout too.
            timeout = "short",
            # One thread, busy the whole run: fuzzing is CPU-bound by design.
            tags = tags + ["resources:cpu:1"],
        )
    sh_binary(
        name = name,
        srcs = ["fuzz/fuzz.sh"],
        args = common + ["600"] + targets + ["--"],
        data = data,
        tags = ["manual"],
        testonly = True,
    )
