"""oci_image_test: checks an oci_image or oci_image_index with //tools/oci/cmd/ocicheck."""

load("@bazel_skylib//lib:shell.bzl", "shell")
load("//tools/starlark:runfiles.bzl", "RUNFILES_ROOT_WORD_SH", "rlocation")
load(":providers.bzl", "OciLayoutInfo")

def _oci_image_test_impl(ctx):
    layout = ctx.attr.image[OciLayoutInfo].layout
    others = [t[OciLayoutInfo].layout for t in ctx.attr.same_as]
    flags = [
        "--layout=" + rlocation(ctx, layout),
        "--platforms=" + ",".join(ctx.attr.platforms),
        "--entrypoint=" + json.encode(ctx.attr.entrypoint),
    ] + ["--same_as=" + rlocation(ctx, o) for o in others]
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.expand_template(
        template = ctx.file._template,
        output = script,
        substitutions = {
            "{checker}": rlocation(ctx, ctx.executable._checker),
            "{flags}": " ".join([shell.quote(f) for f in flags]),
            "{label}": str(ctx.label),
            "{runfiles_root}": RUNFILES_ROOT_WORD_SH,
        },
        is_executable = True,
    )
    runfiles = ctx.runfiles(files = [layout, ctx.executable._checker] + others)
    return [DefaultInfo(executable = script, runfiles = runfiles.merge(ctx.attr._checker[DefaultInfo].default_runfiles))]

oci_image_test = rule(
    implementation = _oci_image_test_impl,
    doc = """Checks an image or index: go-containerregistry's validation of the layout, every image's
OS/architecture against `platforms`, the entrypoint, that the entrypoint is an ELF executable for
that CPU (so an arm64 image really holds aarch64 code), and that every `same_as` target, built from
the same inputs under another name, has the same digest.""",
    test = True,
    attrs = {
        "entrypoint": attr.string_list(doc = "The expected entrypoint; if empty, none is checked for ELF."),
        "image": attr.label(mandatory = True, providers = [OciLayoutInfo]),
        "platforms": attr.string_list(
            doc = "OS/ARCH of the images, in the index's order.",
            default = ["linux/amd64", "linux/arm64"],
        ),
        "same_as": attr.label_list(
            doc = "Images or indexes built from the same inputs; digests must be equal.",
            providers = [OciLayoutInfo],
        ),
        "_checker": attr.label(
            default = Label("//tools/oci/cmd/ocicheck"),
            executable = True,
            cfg = "exec",
        ),
        "_template": attr.label(
            default = Label("//tools/oci/private:test.sh.tpl"),
            allow_single_file = True,
        ),
    },
)
