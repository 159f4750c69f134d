"""go_module_binary: `go build` of a Go module of its own, as one Bazel action.

For a program whose module graph cannot join the repository's go_deps (kcp replaces k8s.io/* with
its own fork; the repository uses upstream k8s.io/*): its source and the modules it imports come in
as two tars (tools/kcp/fetch), the Go SDK is rules_go's toolchain SDK, and `go build` runs offline
against the tarred proxy, with kcp's go.sum checking every module. The action is scheduled, cached
(disk and remote caches) and can run remotely like any other; it compiles the standard library and
every package in a build cache of its own, which is dropped afterwards.
"""

def _one_cpu(_os, _inputs_size):
    # The action compiles on two cores (`go build -p 2`) but claims one, on purpose. Claiming two,
    # it ran alone: every other action of the build waited behind it for its whole length, while
    # `go build` leaves cores idle at its start, between packages and while linking. Claiming one,
    # the build's other actions fill what it leaves idle (tools/kcp/README.md has the figures).
    return {"cpu": 1, "memory": 4096}

def _go_module_binary_impl(ctx):
    toolchain = ctx.toolchains["@io_bazel_rules_go//go:toolchain"]
    sdk = toolchain.sdk
    out = ctx.outputs.out
    x_defs = ["%s=%s" % (k, v) for k, v in sorted(ctx.attr.x_defs.items())]
    args = ctx.actions.args()
    args.add(sdk.go)
    args.add(sdk.root_file)

    # The target platform's, not the SDK's own (sdk.goos is the platform the SDK runs on).
    args.add(toolchain.default_goos)
    args.add(toolchain.default_goarch)
    args.add(ctx.file.src)
    args.add(ctx.file.proxy)
    args.add(ctx.attr.package)
    args.add(out)
    args.add_all(x_defs)
    ctx.actions.run(
        executable = ctx.executable._build,
        arguments = [args],
        inputs = depset(
            [sdk.go, sdk.root_file, ctx.file.src, ctx.file.proxy],
            transitive = [sdk.srcs, sdk.headers, sdk.tools, sdk.libs],
        ),
        outputs = [out],
        mnemonic = "GoModuleBuild",
        progress_message = "Building %s from its own Go module (%s)" % (ctx.label, ctx.attr.package),
        resource_set = _one_cpu,
    )
    return [DefaultInfo(files = depset([out]), executable = out)]

go_module_binary = rule(
    implementation = _go_module_binary_impl,
    doc = "`go build -trimpath` of PACKAGE in the module of SRC, offline against PROXY, pure Go.",
    attrs = {
        "src": attr.label(mandatory = True, allow_single_file = [".tar"], doc = "The main module's source tree, as a tar."),
        "proxy": attr.label(mandatory = True, allow_single_file = [".tar"], doc = "A Go module proxy file tree, as a tar: every module the build downloads."),
        "package": attr.string(mandatory = True, doc = "The package to build, relative to the module root, e.g. ./cmd/kcp."),
        "x_defs": attr.string_dict(doc = "-ldflags=-X stamps: package.variable -> value."),
        "out": attr.output(mandatory = True, doc = "The binary."),
        "_build": attr.label(
            default = Label("//tools/kcp/private:go_module_build.sh"),
            executable = True,
            allow_single_file = True,
            cfg = "exec",
        ),
    },
    executable = True,
    toolchains = ["@io_bazel_rules_go//go:toolchain"],
)
