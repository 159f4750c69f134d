"""lisp_library: compiles Lisp sources to fasls, one action (one SBCL) per library."""

load(":providers.bzl", "LispInfo")
load(":sbcl_action.bzl", "TOOLCHAIN_TYPE", "requires_arg", "run_driver", "run_script", "sbcl_info")

def compile_sources(ctx, srcs, deps, requires, data = []):
    """Compiles srcs in order; returns the LispInfo of the result.

    One action compiles the whole library in one SBCL process: it loads the dependencies' fasls
    once, then compiles each file and loads its fasl before the next, as ASDF does. One process per
    file would start SBCL (under qemu for arm64) and load every earlier fasl again for each file,
    a cost that grows with the square of the library's length. A change to any file recompiles the
    library; libraries are cached separately.

    Args:
      ctx: the rule context.
      srcs: list of File, in load order.
      deps: list of LispInfo.
      requires: list of string, SBCL modules to require before compiling and loading.
      data: list of File that the sources read while compiling (e.g. with #.).

    Returns:
      LispInfo: the library's fasls (after its dependencies'), sources and required modules.
    """
    sbcl = sbcl_info(ctx)
    all_requires = depset(requires, transitive = [d.requires for d in deps])
    loaded = depset(transitive = [d.fasls for d in deps], order = "postorder")
    own = []
    triples = []
    for src in srcs:
        fasl = ctx.actions.declare_file("%s_fasl/%s.fasl" % (ctx.label.name, src.short_path.replace("../", "external/").rsplit(".", 1)[0]))
        own.append(fasl)
        triples.extend([fasl.path, src.path, src.short_path])
    if srcs:
        run_driver(
            ctx,
            sbcl,
            command = "compile",
            arguments = [requires_arg(all_requires), str(len(srcs))] + triples +
                        [f.path for f in loaded.to_list()],
            inputs = depset(srcs + data, transitive = [loaded]),
            outputs = own,
            mnemonic = "LispCompile",
            progress_message = "Compiling Lisp %%{label} (%d files)" % len(srcs),
        )
    return LispInfo(
        fasls = depset(own, transitive = [loaded], order = "postorder"),
        srcs = depset(srcs, transitive = [d.srcs for d in deps]),
        requires = all_requires,
    )

def _asdf_order_validation(ctx):
    """The validation action that checks srcs against the `asdf_system` of `asd`, or None.

    Run with the native SBCL only: the lists do not depend on the CPU, and the amd64 configuration
    checks them for the arm64 one.
    """
    if bool(ctx.file.asd) != bool(ctx.attr.asdf_system):
        fail("%s: `asd` and `asdf_system` go together: the .asd, and the system whose files srcs lists" % ctx.label)
    if not ctx.file.asd:
        return None
    sbcl = sbcl_info(ctx)
    if sbcl.emulator:
        return None
    out = ctx.actions.declare_file(ctx.label.name + ".asdf_order")
    package_dir = ctx.file.asd.dirname
    run_script(
        ctx,
        sbcl,
        script = ctx.file._asdf_order,
        arguments = [out.path, ctx.file.asd.path, ctx.attr.asdf_system, package_dir] + [f.path for f in ctx.files.srcs],
        # The script compares the sources' paths, never their contents: an edit to a source does not
        # run it again.
        inputs = depset([ctx.file.asd]),
        outputs = [out],
        mnemonic = "LispAsdfOrder",
        progress_message = "Checking %{label}'s srcs against the " + ctx.attr.asdf_system + " system",
    )
    return out

def _lisp_library_impl(ctx):
    info = compile_sources(ctx, ctx.files.srcs, [d[LispInfo] for d in ctx.attr.deps], ctx.attr.requires, ctx.files.compile_data)
    validation = _asdf_order_validation(ctx)
    return [
        DefaultInfo(files = depset(transitive = [info.fasls])),
        info,
        OutputGroupInfo(_validation = depset([validation] if validation else [])),
    ]

LISP_COMPILE_ATTRS = {
    "compile_data": attr.label_list(allow_files = True, doc = "files the sources read while compiling"),
    "deps": attr.label_list(providers = [LispInfo], doc = "lisp_library targets loaded before srcs"),
    "requires": attr.string_list(doc = "SBCL modules to require first, e.g. sb-bsd-sockets"),
    "srcs": attr.label_list(allow_files = [".lisp"], doc = "sources, in load order"),
    "_driver": attr.label(default = "//lisp/bazel/private:driver.lisp", allow_single_file = True),
}

lisp_library = rule(
    implementation = _lisp_library_impl,
    doc = "Compiles Lisp sources into fasls, in order, in one action.",
    attrs = dict(LISP_COMPILE_ATTRS, **{
        "asd": attr.label(
            allow_single_file = [".asd"],
            doc = "the .asd that also lists srcs, in this package: a validation action fails the build unless srcs are exactly asdf_system's source files, in the same order. The .asd must be readable alone (no :defsystem-depends-on, no reading other files).",
        ),
        "asdf_system": attr.string(doc = "the system of `asd` whose files srcs lists, e.g. \"clgrpc\""),
        "_asdf_order": attr.label(default = "//lisp/bazel/private:asdf_order.lisp", allow_single_file = True),
    }),
    toolchains = [TOOLCHAIN_TYPE],
)
