"""Bazel 7's native ProtoInfo under a name that does not shadow it.

`ProtoInfo = ProtoInfo` in one file fails ("referenced before assignment"), hence this indirection.
"""

NativeProtoInfo = ProtoInfo
