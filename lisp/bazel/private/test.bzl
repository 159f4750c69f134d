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
    dir_env = {}
    for target, var in ctx.attr.env_dirs.items():
        files = target[DefaultInfo].files.to_list()
        if len(files) != 1:
            fail("%s: an env_dirs entry must be one file, not %d" % (target.label, len(files)))
        dir_env[var] = files[0]
    launcher, runfiles = emulated_launcher(
        ctx,
        exe.executable,
        exe.sbcl,
        ctx.label.name + ".sh",
        env = {"LISP_TEST_SUITES": " ".join(ctx.attr.suites)},
        dir_env = dir_env,
    )
    for t in ctx.attr.data + ctx.attr.env_dirs.keys():
        runfiles = runfiles.merge(ctx.runfiles(transitive_files = t[DefaultInfo].files)).merge(t[DefaultInfo].default_runfiles)
    return [DefaultInfo(executable = launcher, runfiles = runfiles)]

_lisp_fiveam_test = rule(
    implementation = _lisp_fiveam_test_impl,
    attrs = {
        "binary": attr.label(mandatory = True, providers = [LispExecutableInfo], cfg = _platform_transition),
        "suites": attr.string_list(mandatory = True),
        "data": attr.label_list(allow_files = True, doc = "files the test reads at run time"),
        "env_dirs": attr.label_keyed_string_dict(
            allow_files = True,
            doc = "{file label: VAR}: the test sees VAR set to the directory of that file in its runfiles",
        ),
        "target_platform": attr.label(doc = "build the binary for this platform instead of the current one"),
        "_allowlist_function_transition": attr.label(default = "@bazel_tools//tools/allowlists/function_transition_allowlist"),
    },
    test = True,
)

def lisp_test(name, suites, srcs = [], deps = [], requires = [], compile_data = [], data = [], env_dirs = {}, cross_platforms = {}, size = "small", tags = [], **kwargs):
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
      data: files the test reads at run time (of the host's CPU).
      env_dirs: {file label: VAR}: the test sees VAR set to the directory of that file in its
        runfiles (e.g. LD_LIBRARY_PATH for a library the test opens).
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
    _lisp_fiveam_test(name = name, binary = name + "_bin", suites = suites, data = data, env_dirs = env_dirs, size = size, tags = tags, **kwargs)
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
