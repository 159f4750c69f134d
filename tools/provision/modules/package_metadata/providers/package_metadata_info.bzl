"""PackageMetadataInfo, as in bazel-contrib/supply-chain."""

PackageMetadataInfo = provider(
    doc = "Metadata about a package: a JSON file with at least a purl.",
    fields = {
        "metadata": "File: the JSON metadata file.",
        "files": "list of File: files referenced by the metadata.",
    },
)
