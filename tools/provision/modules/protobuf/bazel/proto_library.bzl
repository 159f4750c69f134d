"""proto_library: Bazel 7's native rule, at the real module's load path."""

def proto_library(**kwargs):
    native.proto_library(**kwargs)  # buildifier: disable=native-proto
