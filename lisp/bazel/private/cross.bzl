"""lisp_cross_binary: a lisp_binary built for another platform, runnable here.

The binary is built through a transition to `platform`, so an ordinary build (for the host) gets,
say, the real aarch64 executable. The target's own executable is a launcher that runs it on the
build machine, under qemu-user when its CPU is not the host's. Tests use it as data to exercise the
foreign executable next to host programs (e.g. the Go client against the arm64 Lisp server).
"""

load(":providers.bzl", "LispExecutableInfo")
load(":runfiles.bzl", "emulated_launcher")

def _to_platform_impl(_settings, attr):
    return {"//command_line_option:platforms": [str(attr.platform)]}

_to_platform = transition(
    implementation = _to_platform_impl,
    inputs = [],
    outputs = ["//command_line_option:platforms"],
)

def _lisp_cross_binary_impl(ctx):
    exe = ctx.attr.binary[0][LispExecutableInfo]
    launcher, runfiles = emulated_launcher(ctx, exe.executable, exe.sbcl, ctx.label.name)
    return [
        DefaultInfo(executable = launcher, runfiles = runfiles),
        OutputGroupInfo(foreign_executable = depset([exe.executable])),
    ]

lisp_cross_binary = rule(
    implementation = _lisp_cross_binary_impl,
    doc = """Runs `binary` built for `platform`, under qemu-user when that is another CPU.

    lisp_cross_binary(name = "server_arm64", binary = ":server", platform = "//platforms:linux_arm64")

`bazel run :server_arm64 -- ARGS` runs the aarch64 server on an amd64 machine; the output group
foreign_executable has the executable itself.
""",
    attrs = {
        "binary": attr.label(
            mandatory = True,
            providers = [LispExecutableInfo],
            cfg = _to_platform,
            doc = "a lisp_binary",
        ),
        "platform": attr.label(mandatory = True, doc = "the platform to build binary for"),
        "_allowlist_function_transition": attr.label(default = "@bazel_tools//tools/allowlists/function_transition_allowlist"),
    },
    executable = True,
)
