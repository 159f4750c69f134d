"""Runfiles paths for the launcher scripts that this repository's rules generate."""

# The runfiles root as a shell word: in a test (TEST_SRCDIR), under `bazel run` or a caller that
# sets RUNFILES_DIR, and beside the script otherwise. Templates write `r="{runfiles_root}"` and
# substitute this.
RUNFILES_ROOT_WORD_SH = "${RUNFILES_DIR:-${TEST_SRCDIR:-$0.runfiles}}"

# The shell line that sets $r to the runfiles root, for launchers written whole in Starlark.
RUNFILES_ROOT_SH = "r=" + RUNFILES_ROOT_WORD_SH

def rlocation(ctx, file):
    """Returns the path of `file` under a runfiles directory.

    Args:
      ctx: the rule context (for the main repository's runfiles name).
      file: a File in the rule's runfiles.

    Returns:
      `<repository>/<path>`, as `$RUNFILES_DIR/<that>` resolves it: a file of another repository
      has a short path of `../<repository>/<path>`.
    """
    if file.short_path.startswith("../"):
        return file.short_path[len("../"):]
    return ctx.workspace_name + "/" + file.short_path
