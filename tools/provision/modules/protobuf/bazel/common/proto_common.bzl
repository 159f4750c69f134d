"""proto_common: Bazel 7's native one, at the real module's load path."""

proto_common = proto_common_do_not_use
