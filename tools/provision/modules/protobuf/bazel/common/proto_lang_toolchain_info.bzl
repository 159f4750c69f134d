"""ProtoLangToolchainInfo: Bazel 7's native provider, at the real module's load path."""

ProtoLangToolchainInfo = proto_common_do_not_use.ProtoLangToolchainInfo
