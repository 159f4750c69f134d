"""proto_toolchain, forwarded to rules_proto."""

load("@rules_proto//proto:proto_toolchain.bzl", _proto_toolchain = "proto_toolchain")

proto_toolchain = _proto_toolchain
