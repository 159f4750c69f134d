"""rootfs_tar: chosen files of an unpacked Debian package repository, as a layer tar."""

def _rootfs_path(file, strip_prefix):
    # The path inside its repository, e.g. root/lib/x86_64-linux-gnu/libc.so.6.
    path = file.short_path
    if path.startswith("../"):
        path = path[len("../"):].partition("/")[2]
    if not path.startswith(strip_prefix):
        fail("%s is not under %s" % (file.short_path, strip_prefix))
    return path[len(strip_prefix):]

def _rootfs_tar_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".tar")
    manifest = []
    files = []
    executables = {p: False for p in ctx.attr.executables}
    for f in ctx.files.srcs:
        dest = _rootfs_path(f, ctx.attr.strip_prefix)
        if any([dest == p or dest.startswith(p.rstrip("/") + "/") for p in ctx.attr.include]):
            mode = "0644"
            if dest in executables:
                mode = "0755"
                executables[dest] = True
            manifest.append("%s\t%s\t%s" % (dest, f.path, mode))
            files.append(f)
    if not files:
        fail("%s: no file of srcs is under %s" % (ctx.label, ctx.attr.include))
    missing = [p for p, found in executables.items() if not found]
    if missing:
        fail("%s: executables not among the files kept: %s" % (ctx.label, missing))
    manifest_file = ctx.actions.declare_file(ctx.label.name + ".manifest")
    ctx.actions.write(manifest_file, "\n".join(sorted(manifest)) + "\n")
    ctx.actions.run(
        executable = ctx.executable._tool,
        arguments = ["rootfs", "--manifest", manifest_file.path, "--out", out.path],
        inputs = files + [manifest_file],
        outputs = [out],
        mnemonic = "OciRootfs",
        progress_message = "Packing the files of %{label}",
    )
    return [DefaultInfo(files = depset([out]))]

rootfs_tar = rule(
    implementation = _rootfs_tar_impl,
    doc = """A tar of the files of `srcs` (an unpacked Debian package tree) under `include`.

Made for a minimal glibc base image from the pinned packages the repository already fetches (e.g.
`@sbcl_linux_arm64//:runtime`): `include = ["lib/", "usr/lib/aarch64-linux-gnu/libzstd.so.1"]`
keeps the C library and libzstd and leaves the rest. Bazel hands over a package's symbolic links as
copies of their targets, so they are regular files here. A file is 0755 if `executables` names
it, else 0644: the mode is declared, not read from the input, because a remote worker hands every
input over as executable (Bazel marks them so), and the layer must be the same wherever it is
built.""",
    attrs = {
        "executables": attr.string_list(
            doc = "Paths under the root of files that are 0755 in the layer (the dynamic loader, which the kernel executes, for instance).",
        ),
        "include": attr.string_list(
            doc = "Paths under the root to keep: a file, or a directory with everything below it.",
            mandatory = True,
        ),
        "srcs": attr.label_list(allow_files = True, mandatory = True),
        "strip_prefix": attr.string(
            doc = "The root of the file tree inside the source repository.",
            default = "root/",
        ),
        "_tool": attr.label(
            default = Label("//tools/oci/cmd/ociassemble"),
            executable = True,
            cfg = "exec",
        ),
    },
)
