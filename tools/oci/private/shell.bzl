"""Quoting for the shell scripts that the rules generate."""

def shell_quote(s):
    """Returns `s` quoted as one word for bash.

    Args:
      s: any string.

    Returns:
      `s` in single quotes, with embedded single quotes escaped.
    """
    return "'" + s.replace("'", "'\\''") + "'"
