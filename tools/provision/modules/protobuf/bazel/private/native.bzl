"""Bazel 7's native ProtoInfo under a name that does not shadow it.

`ProtoInfo = ProtoInfo` in one file fails ("referenced before assignment"), hence this indirection.
"""

# buildifier: disable=native-proto-info (the native symbol is the point: this is where it is taken)
NativeProtoInfo = ProtoInfo
