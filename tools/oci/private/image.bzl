"""oci_image: one OCI image for the target platform, as an OCI layout directory."""

load(":platform.bzl", "PLATFORM_ATTRS", "oci_platform")
load(":providers.bzl", "OciLayoutInfo")

def _config(ctx):
    os, arch = oci_platform(ctx)
    return {
        "architecture": arch,
        # An empty list means "not set" (keep the base's), since attributes cannot be None.
        "cmd": ctx.attr.cmd or None,
        "entrypoint": ctx.attr.entrypoint or None,
        "env": ["%s=%s" % kv for kv in ctx.attr.env.items()],
        "exposed_ports": ctx.attr.exposed_ports,
        "labels": ctx.attr.labels,
        "os": os,
        "user": ctx.attr.user,
        "workdir": ctx.attr.workdir,
    }

def _oci_image_impl(ctx):
    layout = ctx.actions.declare_directory(ctx.label.name)
    digest = ctx.actions.declare_file(ctx.label.name + ".digest")
    config = ctx.actions.declare_file(ctx.label.name + ".config.json")
    ctx.actions.write(config, json.encode_indent(_config(ctx)))

    args = ctx.actions.args()
    args.add("image")
    args.add("--config", config)
    args.add("--out", layout.path)
    args.add("--digest", digest)
    inputs = [config] + ctx.files.tars
    if ctx.attr.base:
        base = ctx.attr.base[OciLayoutInfo].layout
        args.add("--base", base.path)
        inputs.append(base)
    args.add_all(ctx.files.tars, before_each = "--layer")
    ctx.actions.run(
        executable = ctx.executable._tool,
        arguments = [args],
        inputs = inputs,
        outputs = [layout, digest],
        mnemonic = "OciImage",
        progress_message = "Assembling OCI image %{label}",
    )

    tarball = ctx.actions.declare_file(ctx.label.name + ".tar")
    ctx.actions.run(
        executable = ctx.executable._tool,
        arguments = [
            "tarball",
            "--layout",
            layout.path,
            "--tag",
            ctx.attr.repo_tag or "%s:latest" % ctx.label.name.replace("_", "-"),
            "--out",
            tarball.path,
        ],
        inputs = [layout],
        outputs = [tarball],
        mnemonic = "OciTarball",
        progress_message = "Writing the docker-load tarball of %{label}",
    )
    return [
        DefaultInfo(files = depset([layout])),
        OutputGroupInfo(config = depset([config]), digest = depset([digest]), tarball = depset([tarball])),
        OciLayoutInfo(layout = layout, digest = digest),
    ]

oci_image = rule(
    implementation = _oci_image_impl,
    doc = """An OCI image for the target platform, written as an OCI image layout directory.

The layers are the `tars` (rules_pkg `pkg_tar` outputs), on top of `base`'s or of nothing
(scratch). Every layer is rewritten in a canonical form (sorted entries, epoch timestamps, no owner
names) and the config's timestamps are the epoch, so the digest depends only on the contents.
The architecture follows the target platform (`--platforms`, or oci_image_index's transition).

Outputs: the layout directory `NAME/`. Output groups: `digest`, `NAME.digest` (`sha256:...`);
`tarball`, `NAME.tar` for `docker load` or `podman load`; `config`, the action's config input, for
tests.""",
    attrs = PLATFORM_ATTRS | {
        "base": attr.label(
            doc = "An oci_image to build on (e.g. a glibc base); scratch if unset.",
            providers = [OciLayoutInfo],
        ),
        "cmd": attr.string_list(doc = "Default arguments to the entrypoint."),
        "entrypoint": attr.string_list(doc = "The command the container runs; the base's if empty."),
        "env": attr.string_dict(doc = "Environment variables; they override the base's."),
        "exposed_ports": attr.string_list(doc = "Ports, `10000` or `10000/udp` (tcp by default)."),
        "labels": attr.string_dict(doc = "Config labels, e.g. org.opencontainers.image.source."),
        "repo_tag": attr.string(doc = "The name `docker load` gives the tarball; NAME:latest if unset."),
        "tars": attr.label_list(
            doc = "Layers, in order: tar files, e.g. pkg_tar targets.",
            allow_files = [".tar", ".tar.gz", ".tgz"],
        ),
        "user": attr.string(doc = "User (and group) the process runs as, e.g. `65532:65532`."),
        "workdir": attr.string(doc = "Working directory of the process."),
        "_tool": attr.label(
            default = Label("//tools/oci/cmd/ociassemble"),
            executable = True,
            cfg = "exec",
        ),
    },
)
