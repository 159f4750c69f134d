"""sbcl_toolchain: an SBCL for one target CPU, run on the build machine (under qemu if needed)."""

load(":providers.bzl", "SbclInfo")

def _sbcl_toolchain_impl(ctx):
    sbcl = ctx.file.sbcl

    # sbcl is root/usr/bin/sbcl: the root file system is three directories up.
    root = sbcl.dirname.rsplit("/", 2)[0]
    info = SbclInfo(
        sbcl = sbcl,
        core = ctx.file.core,
        files = depset([sbcl, ctx.file.core], transitive = [f[DefaultInfo].files for f in ctx.attr.runtime]),
        emulator = ctx.file.emulator,
        sysroot = root if ctx.file.emulator else "",
        sysroot_files = depset(transitive = [f[DefaultInfo].files for f in ctx.attr.runtime]) if ctx.file.emulator else depset(),
        library_path = root + "/" + ctx.attr.library_dir if ctx.attr.library_dir else "",
        target_cpu = ctx.attr.target_cpu,
    )
    return [platform_common.ToolchainInfo(sbcl = info)]

sbcl_toolchain = rule(
    implementation = _sbcl_toolchain_impl,
    doc = "Declares an SBCL (usually unpacked from Debian by the sbcl module extension).",
    attrs = {
        "core": attr.label(mandatory = True, allow_single_file = True),
        "emulator": attr.label(
            allow_single_file = True,
            cfg = "exec",
            doc = "qemu-user binary, when the SBCL is for another CPU than the build machine's",
        ),
        "library_dir": attr.string(doc = "directory under the root with shared libraries for LD_LIBRARY_PATH"),
        "runtime": attr.label_list(allow_files = True, doc = "everything the runtime loads"),
        "sbcl": attr.label(mandatory = True, allow_single_file = True),
        "target_cpu": attr.string(mandatory = True, values = ["x86_64", "aarch64"]),
    },
)
