"""lisp_test: runs FiveAM suites; a failure fails the test, and results go to Bazel's XML report."""

load(":binary.bzl", "lisp_binary")
load(":providers.bzl", "LispExecutableInfo")
load(":runfiles.bzl", "emulated_launcher")

def _platform_transition_impl(settings, attr):
    if not attr.target_platform:
        return {"//command_line_option:platforms": settings["//command_line_option:platforms"]}
    return {"//command_line_option:platforms": [str(attr.target_platform)]}

_platform_transition = transition(
    implementation = _platform_transition_impl,
    inputs = ["//command_line_option:platforms"],
    outputs = ["//command_line_option:platforms"],
)

def _lisp_fiveam_test_impl(ctx):
    binary = ctx.attr.binary[0] if type(ctx.attr.binary) == "list" else ctx.attr.binary
    exe = binary[LispExecutableInfo]
    launcher, runfiles = emulated_launcher(
        ctx,
        exe.executable,
        exe.sbcl,
        ctx.label.name + ".sh",
        env = {"LISP_TEST_SUITES": " ".join(ctx.attr.suites)},
    )
    return [DefaultInfo(executable = launcher, runfiles = runfiles)]

_lisp_fiveam_test = rule(
    implementation = _lisp_fiveam_test_impl,
    attrs = {
        "binary": attr.label(mandatory = True, providers = [LispExecutableInfo], cfg = _platform_transition),
        "suites": attr.string_list(mandatory = True),
        "target_platform": attr.label(doc = "build the binary for this platform instead of the current one"),
        "_allowlist_function_transition": attr.label(default = "@bazel_tools//tools/allowlists/function_transition_allowlist"),
    },
    test = True,
)

def lisp_test(name, suites, srcs = [], deps = [], requires = [], compile_data = [], cross_platforms = {}, size = "small", tags = [], **kwargs):
    """FiveAM suites as a Bazel test.

    Declares NAME (for the current target platform) and one NAME_<suffix> test per entry of
    cross_platforms ({suffix: platform label}); those build for that platform and run under
    qemu-user when it is another CPU, inside an ordinary `bazel test //...`.

    Args:
      name: the test's name.
      suites: FiveAM suite names to run, e.g. "clgrpc.tests::all".
      srcs: test sources, in load order.
      deps: lisp_library targets, including the code under test.
      requires: SBCL modules to require first.
      compile_data: files the sources read while compiling.
      cross_platforms: extra platforms to build and run the same test for.
      size: the test size.
      tags: tags of the tests (the helper binary is always manual).
      **kwargs: common attributes.
    """
    lisp_binary(
        name = name + "_bin",
        srcs = srcs,
        deps = deps + [Label("//lisp/bazel:fiveam_runner")],
        requires = requires,
        compile_data = compile_data,
        main = "bazel.fiveam:main",
        tags = tags + ["manual"],
        testonly = True,
        **kwargs
    )
    _lisp_fiveam_test(name = name, binary = name + "_bin", suites = suites, size = size, tags = tags, **kwargs)
    for suffix, platform in cross_platforms.items():
        _lisp_fiveam_test(
            name = name + "_" + suffix,
            binary = name + "_bin",
            suites = suites,
            target_platform = platform,
            size = size,
            tags = tags,
            **kwargs
        )
