"""proto_lang_toolchain, forwarded to rules_proto."""

load("@rules_proto//proto:proto_lang_toolchain.bzl", _proto_lang_toolchain = "proto_lang_toolchain")

proto_lang_toolchain = _proto_lang_toolchain
