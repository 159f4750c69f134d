"""lisp_binary: an executable saved by save-lisp-and-die."""

load(":library.bzl", "LISP_COMPILE_ATTRS", "compile_sources")
load(":providers.bzl", "LispExecutableInfo", "LispInfo")
load(":runfiles.bzl", "emulated_launcher")
load(":sbcl_action.bzl", "TOOLCHAIN_TYPE", "requires_arg", "run_save", "sbcl_info")

def save_executable(ctx, info, main, compress, name):
    """Saves an executable that loads info's fasls and calls MAIN.

    Args:
      ctx: the rule context (needs the private _driver and _save attributes).
      info: LispInfo of what the executable holds.
      main: the entry function, "package:function".
      compress: whether to compress the core.
      name: the executable's file name.

    Returns:
      The executable File.
    """
    sbcl = sbcl_info(ctx)
    out = ctx.actions.declare_file(name)
    run_save(
        ctx,
        sbcl,
        out = out,
        arguments = [main, "1" if compress else "0", requires_arg(info.requires)],
        fasls = info.fasls.to_list(),
        mnemonic = "LispSave",
        progress_message = "Saving Lisp executable %{output}",
    )
    return out

def _lisp_binary_impl(ctx):
    sbcl = sbcl_info(ctx)
    info = compile_sources(ctx, ctx.files.srcs, [d[LispInfo] for d in ctx.attr.deps], ctx.attr.requires, ctx.files.compile_data)
    exe = save_executable(ctx, info, ctx.attr.main, ctx.attr.compress, ctx.label.name)
    if sbcl.emulator:
        # A foreign executable: `bazel run` goes through qemu-user on this machine.
        launcher, runfiles = emulated_launcher(ctx, exe, sbcl, ctx.label.name + ".qemu")
        default = DefaultInfo(files = depset([exe]), executable = launcher, runfiles = runfiles)
    else:
        default = DefaultInfo(files = depset([exe]), executable = exe)
    return [default, LispExecutableInfo(executable = exe, sbcl = sbcl)]

LISP_BINARY_ATTRS = LISP_COMPILE_ATTRS | {
    "compress": attr.bool(default = False, doc = "compress the saved core (zstd): smaller, starts slower"),
    "main": attr.string(mandatory = True, doc = "the entry function, as package:function; its integer result is the exit code"),
    "_save": attr.label(
        default = "//lisp/bazel/private:save",
        executable = True,
        cfg = "exec",
    ),
}

lisp_binary = rule(
    implementation = _lisp_binary_impl,
    doc = "An executable made with save-lisp-and-die from srcs and deps.",
    attrs = LISP_BINARY_ATTRS,
    executable = True,
    toolchains = [TOOLCHAIN_TYPE],
)
