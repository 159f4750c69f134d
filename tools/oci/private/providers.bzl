"""The provider that oci_image and oci_image_index return and oci_push and oci_image_test read."""

OciLayoutInfo = provider(
    doc = "An OCI image layout directory whose index.json names one image or one image index.",
    fields = {
        "digest": "File: the root's digest, `sha256:<hex>` and a newline",
        "layout": "File: the layout directory (a tree artifact)",
    },
)
