"""package_metadata: writes the package's purl as JSON and provides PackageMetadataInfo."""

load("//providers:package_metadata_info.bzl", "PackageMetadataInfo")

def _package_metadata_impl(ctx):
    out = ctx.actions.declare_file(ctx.attr.name + ".package-metadata.json")
    ctx.actions.write(out, json.encode({
        "label": str(ctx.label),
        "purl": ctx.attr.purl,
        "attributes": {str(a.label): "" for a in ctx.attr.attributes},
    }))
    return [
        DefaultInfo(files = depset([out])),
        PackageMetadataInfo(metadata = out, files = []),
    ]

_package_metadata = rule(
    implementation = _package_metadata_impl,
    attrs = {
        "attributes": attr.label_list(),
        "purl": attr.string(mandatory = True),
    },
)

def package_metadata(name, purl, attributes = [], visibility = None, tags = None, **kwargs):
    # A metadata target must not carry its package's default metadata itself: REPO.bazel's
    # default_package_metadata would make it depend on itself.
    _package_metadata(
        name = name,
        purl = purl,
        attributes = attributes,
        applicable_licenses = [],
        visibility = visibility,
        tags = tags,
        **kwargs
    )
