"""oci_push: a runnable target that pushes an oci_image or oci_image_index to a registry."""

load("@bazel_skylib//lib:shell.bzl", "shell")
load("//tools/starlark:runfiles.bzl", "RUNFILES_ROOT_WORD_SH", "rlocation")
load(":providers.bzl", "OciLayoutInfo")

def _oci_push_impl(ctx):
    layout = ctx.attr.image[OciLayoutInfo].layout
    tool = ctx.executable._tool
    defaults = ["--repository=" + ctx.attr.repository, "--tags=" + ",".join(ctx.attr.image_tags)]
    if ctx.attr.registry:
        defaults.append("--registry=" + ctx.attr.registry)
    launcher = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.expand_template(
        template = ctx.file._template,
        output = launcher,
        substitutions = {
            "{defaults}": " ".join([shell.quote(d) for d in defaults]),
            "{label}": str(ctx.label),
            "{runfiles_root}": RUNFILES_ROOT_WORD_SH,
            "{layout}": rlocation(ctx, layout),
            "{tool}": rlocation(ctx, tool),
        },
        is_executable = True,
    )
    runfiles = ctx.runfiles(files = [layout, tool]).merge(ctx.attr._tool[DefaultInfo].default_runfiles)
    return [DefaultInfo(executable = launcher, runfiles = runfiles)]

oci_push = rule(
    implementation = _oci_push_impl,
    doc = """Pushes an image or index to a registry: `bazel run TARGET -- --registry HOST:PORT`.

The registry is a flag because it belongs to whoever deploys, not to the build; `registry` sets a
default. Credentials come from the Docker config (`~/.docker/config.json`, credential helpers).
Loopback and private addresses are spoken to over plain HTTP; `--insecure` forces it elsewhere.""",
    executable = True,
    attrs = {
        "image": attr.label(
            doc = "An oci_image or oci_image_index.",
            mandatory = True,
            providers = [OciLayoutInfo],
        ),
        # Not `tags`: every rule has that attribute, for Bazel's own tags.
        "image_tags": attr.string_list(doc = "Tags to push.", default = ["latest"]),
        "registry": attr.string(doc = "Default registry, HOST[:PORT]; else --registry is required."),
        "repository": attr.string(
            doc = "Repository, e.g. grpcbench/routeguide-server.",
            mandatory = True,
        ),
        "_template": attr.label(
            default = Label("//tools/oci/private:push.sh.tpl"),
            allow_single_file = True,
        ),
        "_tool": attr.label(
            default = Label("//tools/oci/cmd/ociassemble"),
            executable = True,
            cfg = "exec",
        ),
    },
)
