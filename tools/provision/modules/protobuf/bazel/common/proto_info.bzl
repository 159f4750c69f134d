"""ProtoInfo: Bazel 7's native provider, at the real module's load path."""

load("//bazel/private:native.bzl", "NativeProtoInfo")

ProtoInfo = NativeProtoInfo
