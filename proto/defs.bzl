"""Proto files that exist only as descriptors embedded in linked Go packages."""

load("@com_google_protobuf//bazel:proto_library.bzl", "proto_library")
load("//tools/generated:defs.bzl", "checked_in_files")

def go_embedded_proto_library(name, file, import_prefix, deps = [], visibility = None):
    """A proto_library of FILE, a checked-in copy of what //tools/protoprint prints for it.

    Upstream modules ship such files, but go_deps makes no Bazel target for them ("gazelle:proto
    disable"). The copy, upstream_NAME/BASENAME, is //tools/protoprint's output from the descriptor
    that the linked Go package embeds; NAME_current_test fails when it differs from what the printer
    prints now, and `bazel run :NAME_current` rewrites it. The copy is checked in rather than printed
    in the build because go_proto_library resets every Go setting for its protos (rules_go's
    non_go_tool_transition), so a printer built there is one more Go configuration, with cgo and a
    standard library of its own. //tools/protoprint:protoprint_test checks that protoc reads back
    the identical descriptor.

    Args:
      name: the proto_library's name; the checked-in source is upstream_NAME/BASENAME.
      file: the file's path as the Go package registers it, e.g. "grpc/health/v1/health.proto".
      import_prefix: the directory under which other protos import it.
      deps: the proto_library targets of the files it imports.
      visibility: of the proto_library.
    """
    directory = "upstream_" + name
    basename = file.split("/")[-1]
    src = directory + "/" + basename
    native.genrule(
        name = name + "_printed",
        outs = ["printed_" + name + "/" + basename],
        cmd = "$(execpath //tools/protoprint) -file %s > $@" % file,
        tools = ["//tools/protoprint"],
    )
    checked_in_files(
        name = name + "_current",
        srcs = ":" + name + "_printed",
        files = [src],
    )
    proto_library(
        name = name,
        srcs = [src],
        import_prefix = import_prefix,
        strip_import_prefix = directory,
        deps = deps,
        visibility = visibility,
    )
