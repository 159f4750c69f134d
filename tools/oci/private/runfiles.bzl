"""Runfiles paths for the launcher scripts that oci_push and oci_image_test generate."""

def rlocation(ctx, file):
    """Returns the path of `file` under a runfiles directory.

    Args:
      ctx: the rule context (for the main repository's runfiles name).
      file: a File in the rule's runfiles.

    Returns:
      `<repository>/<path>`, as `$RUNFILES_DIR/<that>` resolves it.
    """
    if file.short_path.startswith("../"):
        return file.short_path[len("../"):]
    return ctx.workspace_name + "/" + file.short_path
