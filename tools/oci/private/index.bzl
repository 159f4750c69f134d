"""oci_image_index: the same oci_image built for several platforms, as one multi-arch index."""

load(":providers.bzl", "OciLayoutInfo")
load(":transition.bzl", "per_platform")

def _oci_image_index_impl(ctx):
    layout = ctx.actions.declare_directory(ctx.label.name)
    digest = ctx.actions.declare_file(ctx.label.name + ".digest")
    images = [ctx.split_attr.image[str(p.label)][OciLayoutInfo].layout for p in ctx.attr.platforms]
    args = ctx.actions.args()
    args.add("index")
    args.add("--out", layout.path)
    args.add("--digest", digest)
    args.add_all(images, before_each = "--image", expand_directories = False)
    ctx.actions.run(
        executable = ctx.executable._tool,
        arguments = [args],
        inputs = images,
        outputs = [layout, digest],
        mnemonic = "OciIndex",
        progress_message = "Assembling OCI image index %{label}",
    )
    return [
        DefaultInfo(files = depset([layout])),
        OutputGroupInfo(digest = depset([digest])),
        OciLayoutInfo(layout = layout, digest = digest),
    ]

oci_image_index = rule(
    implementation = _oci_image_index_impl,
    doc = """A multi-platform OCI image index of one oci_image, built once per platform.

`image` is built in a configuration per entry of `platforms` (a split transition on
`--platforms`), so a Go binary in it is cross-compiled and a Lisp one is saved by that CPU's SBCL.
The index lists the images in the order of `platforms`. Outputs: the layout directory `NAME/`;
output group `digest`: `NAME.digest` (`sha256:...`).""",
    attrs = {
        "image": attr.label(
            doc = "The oci_image to build for every platform.",
            mandatory = True,
            providers = [OciLayoutInfo],
            cfg = per_platform,
        ),
        "platforms": attr.label_list(
            doc = "Target platforms, one image each.",
            default = [
                Label("//platforms:linux_amd64"),
                Label("//platforms:linux_arm64"),
            ],
            providers = [platform_common.PlatformInfo],
        ),
        "_tool": attr.label(
            default = Label("//tools/oci/cmd/ociassemble"),
            executable = True,
            cfg = "exec",
        ),
    },
)
